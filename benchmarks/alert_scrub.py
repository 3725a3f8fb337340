"""What scrubbing a receiver's answer of channel secrets costs, per stored and per served error.

Usage: .venv/bin/python benchmarks/alert_scrub.py [--channels 3] [--chars 1000] [--rounds 200]

Builds ``--channels`` channels (a webhook URL with path and query, a signing secret, a
Bearer header each), and an error of ``--chars`` characters holding percent, JSON and
HTML escapes. Prints the time of ``scrub_cut`` on a 2,000-character answer (what the
worker does once per failed delivery) and of ``scrub`` on the stored error (what
``GET /api/v1/alerts/outbox`` does once per row served, up to 1,000 rows a request).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from correlator.alerts.masking import channel_secrets, scrub, scrub_cut  # noqa: E402


def _secrets(n: int) -> list[str]:
    out: list[str] = []
    for i in range(n):
        url = (
            f"https://hooks{i}.example.com/services/T0{i}/B1{i}/AbCdEf0123456789x{i}?token=Q1w2{i}"
        )
        headers = {"Authorization": f"Bearer tok{i}-abcdefghijklmnop1234"}
        out += channel_secrets(url, f"SEC{i}0123456789abcdefghij", headers)
    return out


def _time(fn, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.perf_counter() - start) / rounds * 1000


def main() -> None:
    """Print milliseconds per call of scrub_cut and scrub."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--channels", type=int, default=3)
    ap.add_argument("--chars", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    secrets = _secrets(args.channels)
    piece = '{"error": "went wrong %2Fservices\\/x &amp; more", "id": 42} '
    error = (piece * (args.chars // len(piece) + 1))[: args.chars]
    answer = (piece * (2000 // len(piece) + 1))[:2000]
    cut = _time(lambda: scrub_cut(answer, 2000, *secrets), args.rounds)
    served = _time(lambda: scrub(error, *secrets), args.rounds)
    print(f"{args.channels} channels, {len(secrets)} secret values")
    print(f"scrub_cut of a 2000-character answer: {cut:.2f} ms")
    print(f"scrub of a {args.chars}-character stored error: {served:.2f} ms")
    print(f"1000 such rows served (ms x 1000 rows): {served:.2f} s")


if __name__ == "__main__":
    main()
