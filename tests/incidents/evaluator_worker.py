"""A separate evaluator process for the lease test: run passes, print one JSON line each."""

from __future__ import annotations

import json
import sys
import time

from correlator.incidents.evaluator import evaluate_once, holder_name
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine


def main(url: str, passes: int, at: float, start_at: float) -> None:
    """Wait until ``start_at`` (so both processes race), then evaluate ``passes`` times."""
    engine = make_engine(url)
    holder = holder_name()
    time.sleep(max(0.0, start_at - time.time()))
    for _ in range(passes):
        report = evaluate_once(
            engine, holder=holder, now=at, lease_seconds=60, settings=ServiceSettings()
        )
        print(json.dumps(report), flush=True)
        time.sleep(0.05)
    engine.dispose()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
