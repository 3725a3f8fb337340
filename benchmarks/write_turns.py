"""Small writes beside ingest on SQLite: how long a change or an event waits for its turn.

SQLite has one writer at a time. One thread stores ``benchmarks/ingest.py`` batches (10,000
new samples each, parsed outside the write as the service does) without pause while another
writes one event every 10 ms; it prints the small write's latency percentiles and the
ingest rate meanwhile.

    python benchmarks/write_turns.py
    python benchmarks/write_turns.py --writes 500
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest import make_bodies  # noqa: E402  (benchmarks/ingest.py)


def main() -> None:
    """Ingest in one thread, time small writes in this one."""
    from collector.schema import Event, parse_batch
    from correlator.store.engine import make_engine, write_transaction
    from correlator.store.events import insert_events
    from correlator.store.migrate import upgrade
    from correlator.store.tsdb.ingest import SeriesCache, store_batch

    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--writes", type=int, default=200, help="small writes timed")
    ap.add_argument("--switch", type=float, default=0.00005, help="sys.setswitchinterval (serve's)")
    args = ap.parse_args()
    sys.setswitchinterval(args.switch)
    bodies = make_bodies(6_000_000, 10_000, 20_000, 20)  # fresh samples for the whole run
    with tempfile.TemporaryDirectory() as folder:
        engine = make_engine(f"sqlite:///{folder}/bench.db")
        upgrade(engine)
        cache = SeriesCache()
        for body in bodies[:40]:  # every series known, as in steady state
            store_batch(engine=engine, batch=parse_batch(orjson.loads(body)), cache=cache)
        stop, stored = threading.Event(), [0]

        def ingest() -> None:
            i = 40
            while not stop.is_set():
                batch = parse_batch(orjson.loads(bodies[i % len(bodies)]))
                store_batch(engine=engine, batch=batch, cache=cache)
                i += 1
                stored[0] += 1

        writer = threading.Thread(target=ingest)
        writer.start()
        time.sleep(0.5)
        waits = []
        began = time.perf_counter()
        for k in range(args.writes):
            event = Event(id=f"bench-{k}", ts=1.7e9 + k, kind="bench", summary="a small write")
            t = time.perf_counter()
            with write_transaction(engine) as conn:
                insert_events(conn=conn, events=[event])
            waits.append(time.perf_counter() - t)
            time.sleep(0.01)
        elapsed = time.perf_counter() - began
        stop.set()
        writer.join()
        engine.dispose()
    ms = np.array(waits) * 1000
    rate = stored[0] * 10_000 / elapsed
    print(
        f"{args.writes} small writes beside ingest ({rate:,.0f} samples/s): "
        f"median {np.median(ms):.1f} ms, p90 {np.percentile(ms, 90):.1f}, "
        f"p99 {np.percentile(ms, 99):.1f}, max {ms.max():.1f}"
    )


if __name__ == "__main__":
    main()
