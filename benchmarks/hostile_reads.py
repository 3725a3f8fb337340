"""Ingest latency alone and under a flood of hostile regex reads, through a real server.

For each engine it stores ``--long`` series ``x`` whose label ``v`` is 2 KB long (all
different), starts ``causeline serve`` and times ingest requests (``--batch-series`` series
of 10 fresh points each, one request every ``--interval`` seconds) for ``--seconds``
alone, then for ``--seconds`` while ``--hostile`` clients (another process) send, each as
soon as its last one was answered, reads with a label regex RE2 runs on its slow path
(about 0.2 s per 2 KB value): ``/api/v1/series``, a PromQL ``count()`` and the dashboard's
``/api/v1/query_range`` in turn. The hostile clients run at the lowest CPU priority
(``--client-nice``): on one machine they stand for clients elsewhere. It prints the ingest
p50, p99 and worst latency and its failures in each phase, and how the hostile reads were
answered.

    python benchmarks/hostile_reads.py
    python benchmarks/hostile_reads.py --engines sqlite postgresql --seconds 20
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest import cli, drop_pg, free_port, pg_database, wait_ready  # noqa: E402  (benchmarks/ingest.py)

ROOT = Path(__file__).resolve().parents[1]
HOSTILE_RE = "(.|..){1,1000}(.|..){1,1000}(.|..){1,1000}Z"
HOSTILE = f'x{{v=~"{HOSTILE_RE}"}}'
READS = [
    ("/api/v1/series", {"match": HOSTILE}),
    ("/api/v1/query", {"query": f"count({HOSTILE})"}),
    ("/api/v1/query_range", {"match": HOSTILE, "start": 0, "end": 2e9}),
]


def long_series_body(count: int) -> bytes:
    """Return an ingest body with one point for each of ``count`` series of 2 KB label values."""
    now = time.time()
    series = [
        {
            "name": "x",
            "labels": {"v": f"{i:06d}".ljust(2048, "a")},
            "timestamps": [now - 60],
            "values": [1.0],
        }
        for i in range(count)
    ]
    return orjson.dumps({"series": series})


def ingest_bodies(n_series: int, count: int, start: float) -> list[bytes]:
    """Return ``count`` bodies of 10 points for each of ``n_series`` series, later each time."""
    bodies = []
    for k in range(count):
        ts = [start + 15.0 * (10 * k + j) for j in range(10)]
        series = [
            {
                "name": "bench_ingest",
                "labels": {"host": f"node-{i // 8}", "gpu": str(i % 8)},
                "timestamps": ts,
                "values": [float(i + j) for j in range(10)],
            }
            for i in range(n_series)
        ]
        bodies.append(orjson.dumps({"series": series}))
    return bodies


def time_ingest(base: str, token: str, bodies: list[bytes], seconds: float, interval: float):
    """Send bodies one at a time for ``seconds``; return latencies (s) and failures."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    latencies, failures = [], Counter()
    end = time.monotonic() + seconds
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
        for body in bodies:
            if time.monotonic() >= end:
                break
            began = time.perf_counter()
            try:
                resp = client.post("/api/v1/ingest", content=body)
                if resp.status_code != 200:
                    failures[str(resp.status_code)] += 1
            except httpx.HTTPError as exc:
                failures[type(exc).__name__] += 1
            took = time.perf_counter() - began
            latencies.append(took)
            time.sleep(max(0.0, interval - took))
    return latencies, failures


def _hostile_client(base: str, path: str, params: dict, stop, answers: Counter) -> None:
    with httpx.Client(base_url=base, timeout=120) as client:
        while not stop.is_set():
            try:
                resp = client.get(path, params=params)
            except httpx.HTTPError as exc:
                answers[type(exc).__name__] += 1
                continue
            kind = str(resp.status_code)
            if resp.status_code == 503:
                kind += " lane" if "retry-after" in resp.headers else " deadline"
            answers[kind] += 1


def hostile_process(base: str, clients: int, seconds: float, nice: int, out) -> None:
    """Run ``clients`` hostile readers for ``seconds``; put the count of each answer on out."""
    os.nice(nice)
    stop = threading.Event()
    counts: list[Counter] = [Counter() for _ in range(clients)]
    threads = [
        threading.Thread(
            target=_hostile_client,
            args=(base, *READS[i % len(READS)], stop, counts[i]),
            daemon=True,
        )
        for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    out.put(dict(sum(counts, Counter())))  # reads still running are left to their deadline


def percentiles(latencies: list[float]) -> str:
    """Return p50, p99 and the worst latency in milliseconds."""
    if not latencies:
        return "no requests"
    ms = np.array(latencies) * 1000
    p50, p99 = np.percentile(ms, [50, 99])
    return f"p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  max {ms.max():7.1f} ms  ({ms.size} requests)"


def run_engine(url: str, args) -> None:
    """Seed, serve, and print both phases for one database URL."""
    env = os.environ | {"CAUSELINE_DATABASE_URL": url}
    cli("db", "upgrade", env=env)
    token = cli("token", "create", "bench", env=env)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "causeline.cli", "serve", "--port", str(port)]
            + ["--no-alerts", "--no-evaluator"],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_ready(base)
            auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            seeded = httpx.post(
                f"{base}/api/v1/ingest", content=long_series_body(args.long), headers=auth
            )
            seeded.raise_for_status()
            per_phase = int(args.seconds / args.interval) + 10
            bodies = ingest_bodies(args.batch_series, 2 * per_phase, time.time() - 43_200)
            alone, alone_failed = time_ingest(
                base, token, bodies[:per_phase], args.seconds, args.interval
            )
            out: multiprocessing.Queue = multiprocessing.Queue()
            flood = multiprocessing.Process(
                target=hostile_process,
                args=(base, args.hostile, args.seconds + 2, args.client_nice, out),
            )
            flood.start()
            time.sleep(2)  # the flood is under way
            under, under_failed = time_ingest(
                base, token, bodies[per_phase:], args.seconds, args.interval
            )
            answers = out.get(timeout=120)
            flood.join(30)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
        log.seek(0)
        errors = [line for line in log.read().decode(errors="replace").splitlines() if line]
    print(f"  ingest alone:              {percentiles(alone)}  failed {dict(alone_failed)}")
    print(
        f"  ingest under {args.hostile} hostile: {percentiles(under)}  failed {dict(under_failed)}"
    )
    print(f"  hostile reads answered: {dict(sorted(answers.items()))}")
    if errors:
        print(f"  server log: {len(errors)} lines, last: {errors[-1][:200]}")


def main() -> None:
    """Run the phases on each engine asked for."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--engines", nargs="+", default=["sqlite", "postgresql"])
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    ap.add_argument("--hostile", type=int, default=50, help="concurrent hostile readers")
    ap.add_argument("--long", type=int, default=200, help="series with 2 KB label values")
    ap.add_argument("--batch-series", type=int, default=100, help="series per ingest request")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between ingests")
    ap.add_argument(
        "--client-nice",
        type=int,
        default=19,
        help="CPU niceness of the hostile clients' process (19: they stand for other machines)",
    )
    args = ap.parse_args()
    for engine in args.engines:
        print(f"{engine}:", flush=True)
        if engine == "sqlite":
            with tempfile.TemporaryDirectory() as folder:
                run_engine(f"sqlite:///{Path(folder) / 'hostile.db'}", args)
        else:
            name, url = pg_database()
            try:
                run_engine(url, args)
            finally:
                drop_pg(name)


if __name__ == "__main__":
    main()
