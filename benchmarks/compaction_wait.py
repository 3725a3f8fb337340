"""How long ingest waits while a compaction pass runs, per engine.

For each engine it stores one complete hour of ``--series`` series ``--step`` seconds apart
(1,000 series a second apart: the 1,000 samples/s of one machine), then compacts it while
another thread of the same process writes 200 series of one fresh point every 50 ms, as
agents do. It prints the pass's wall and CPU time, the process's peak memory over what it
held before, and the writes' latency (median, p99, max): on SQLite, one writer at a time,
a write waits for the compaction transaction ahead; on either, for the Python work of the
pass (the GIL). Then a late sample for the compacted hour, and the time and memory of the
rollup pass that rebuilds that hour's 1-minute rollups from its chunks.

    python benchmarks/compaction_wait.py
    python benchmarks/compaction_wait.py --engines sqlite --series 2000 --slice-rows 500000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest import drop_pg, pg_database  # noqa: E402  (benchmarks/ingest.py)
from storage import bench_series, store_span  # noqa: E402  (benchmarks/storage.py)


def late_rebuild(engine, series_id: int, hour_start: float) -> tuple[float, int]:
    """Store a late sample in the compacted hour, roll it up again; return seconds and memory."""
    from correlator.store.engine import write_transaction
    from correlator.store.tsdb.rollups import roll_up
    from correlator.store.tsdb.write import insert_columns, sample_columns

    with write_transaction(engine) as conn:
        insert_columns(conn=conn, cols=sample_columns([series_id], [[hour_start + 0.5]], [[5.0]]))
    me, rss, done = psutil.Process(), [], threading.Event()

    def watch() -> None:
        while not done.is_set():
            rss.append(me.memory_info().rss)
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    base = me.memory_info().rss
    watcher.start()
    began = time.perf_counter()
    roll_up(engine=engine, max_hours=10)
    seconds = time.perf_counter() - began
    done.set()
    watcher.join()
    return seconds, max(rss, default=base) - base


def measure(url: str, args) -> None:
    """Compact the stored hour while writing fresh points; print both."""
    from correlator.store.engine import make_engine, write_transaction
    from correlator.store.migrate import upgrade
    from correlator.store.tsdb.compaction import compact
    from correlator.store.tsdb.write import insert_columns, sample_columns

    engine = make_engine(url)
    try:
        upgrade(engine)
        hour_start = (time.time() // 3600 - 3) * 3600  # complete, past the head
        sids = bench_series(engine, args.series)
        hour = np.arange(hour_start, hour_start + 3600, args.step)
        store_span(engine, sids, hour, "mixed", np.random.default_rng(7))
        waits: list[float] = []
        stop = threading.Event()

        def write() -> None:
            k = 0
            while not stop.is_set():
                at = (k * 200) % len(sids)
                group = sids[at : at + 200]
                began = time.perf_counter()
                with write_transaction(engine) as conn:
                    cols = sample_columns(group, [[time.time()]] * len(group), [[1.0]] * len(group))
                    insert_columns(conn=conn, cols=cols)
                waits.append(time.perf_counter() - began)
                k += 1
                time.sleep(0.05)

        me, rss = psutil.Process(), []

        def watch() -> None:
            while not stop.is_set():
                rss.append(me.memory_info().rss)
                time.sleep(0.02)

        threads = [threading.Thread(target=write), threading.Thread(target=watch)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        base = me.memory_info().rss
        cpu, wall = time.process_time(), time.perf_counter()
        report = compact(engine=engine, head_seconds=3600, max_hours=10, slice_rows=args.slice_rows)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        time.sleep(1.0)
        stop.set()
        for thread in threads:
            thread.join()
        rebuild = late_rebuild(engine, sids[0], hour_start)
    finally:
        engine.dispose()
    ms = np.array(waits) * 1000
    print(
        f"{engine.dialect.name:10s} compaction {report.samples:,} samples in {wall:.1f} s "
        f"({report.samples / wall:,.0f}/s, process CPU {cpu:.1f} s with the writes, "
        f"RSS +{(max(rss) - base) / 2**20:,.0f} MiB) | "
        f"{len(ms)} writes: median {np.median(ms):.1f} ms, p99 {np.percentile(ms, 99):.0f} ms, "
        f"max {ms.max():.0f} ms"
    )
    print(
        f"{'':10s} a late sample's rollup of the compacted hour: {rebuild[0]:.1f} s, "
        f"RSS +{rebuild[1] / 2**20:,.0f} MiB"
    )


def main() -> None:
    """Measure each engine."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="sqlite,postgresql")
    ap.add_argument("--series", type=int, default=1000)
    ap.add_argument("--step", type=float, default=1.0, help="seconds between samples")
    ap.add_argument(
        "--slice-rows",
        type=int,
        default=None,
        help="samples a transaction of a large hour (default: SLICE_ROWS; 10**12: whole hours)",
    )
    args = ap.parse_args()
    for name in args.engines.split(","):
        if name == "sqlite":
            with tempfile.TemporaryDirectory() as folder:
                measure(f"sqlite:///{folder}/bench.db", args)
            continue
        from correlator.store.engine import with_driver

        db, url = pg_database()
        try:
            measure(with_driver(url), args)
        finally:
            drop_pg(db)


if __name__ == "__main__":
    main()
