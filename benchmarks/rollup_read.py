"""Board-like stepped reads from raw samples against 1-minute rollups, on SQLite and PostgreSQL.

For each engine it stores ``--hours`` (24) of 15 s samples of ``--series`` (130) series
ending now, times ``read_range`` over the whole window with ``--step`` (144 s: 24 h at 600
points, as the board asks) from raw samples, runs the rollup job (timed), then times the
same read served from rollups (raw for the hours not rolled up yet). Each read is timed
once as one call over every series and once as the board does it: ``--groups`` (17)
queries, four at a time. Medians of ``--runs`` (5). It also checks that every bucket of a
whole-minute step keeps its raw lowest and highest value.

    .venv/bin/python benchmarks/rollup_read.py
    .venv/bin/python benchmarks/rollup_read.py --engines sqlite --runs 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PG_ADMIN = os.environ.get("CAUSELINE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")


def fill(engine, n_series: int, hours: float, end: float) -> tuple[list[int], int]:
    """Store 15 s samples (a random walk, 1% NaN) of n_series series; return ids and rows."""
    from correlator.store.engine import write_transaction
    from correlator.store.tsdb.series import ensure_series
    from correlator.store.tsdb.write import insert_columns, sample_columns

    rng = np.random.default_rng(1)
    items = {
        f"bench{i}": (f"bench_metric_{i % 13}", {"host": f"h{i // 13}"}) for i in range(n_series)
    }
    with write_transaction(engine) as conn:
        ids = ensure_series(conn=conn, items=items)
    sids = [ids[k] for k in items]
    ts = np.arange(end - hours * 3600, end, 15.0)
    rows = 0
    for i in range(0, n_series, 10):
        chunk = sids[i : i + 10]
        values = []
        for _ in chunk:
            v = 50 + np.cumsum(rng.normal(0, 1, len(ts)))
            v[rng.random(len(ts)) < 0.01] = np.nan
            values.append(v.tolist())
        with write_transaction(engine) as conn:
            rows += insert_columns(
                conn=conn, cols=sample_columns(chunk, [ts.tolist()] * len(chunk), values)
            )
    return sids, rows


def read_once(engine, ids, start, end, step) -> dict:
    """Read every series in one call."""
    from correlator.store.tsdb.read import read_range

    with engine.connect() as conn:
        return read_range(conn=conn, series_ids=ids, start=start, end=end, step=step)


def read_board(engine, ids, start, end, step, groups: int) -> int:
    """Read the series in ``groups`` queries, four at a time (the board's client); return points."""
    parts = [ids[i::groups] for i in range(groups)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda p: read_once(engine, p, start, end, step), parts))
    return sum(len(d.ts) for data in found for d in data.values())


def median_time(fn, runs: int) -> float:
    """Return the median wall time of fn over runs calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def buckets(data: dict, step: float) -> dict:
    """Return (series, bucket) -> (lowest, highest) of a stepped read."""
    out = {}
    for sid, d in data.items():
        b = np.rint(d.ts * 1000).astype(np.int64) // round(step * 1000)
        for k in np.unique(b):
            v = d.values[b == k]
            out[(sid, int(k))] = (float(v.min()), float(v.max()))
    return out


def run(engine_name: str, url: str, args) -> None:
    """Fill one store and print raw against rollup read times and the job's time."""
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade
    from correlator.store.tsdb.rollups import roll_up

    engine = make_engine(url)
    try:
        upgrade(engine)
        end = time.time()
        began = time.perf_counter()
        ids, rows = fill(engine, args.series, args.hours, end)
        filled = time.perf_counter() - began
        start = end - args.hours * 3600
        if engine_name == "postgresql":
            with engine.connect() as conn:
                conn.exec_driver_sql("ANALYZE")
                conn.commit()
        step = args.step

        def one():
            return read_once(engine, ids, start, end, step)

        def board():
            return read_board(engine, ids, start, end, step, args.groups)

        raw_one, raw_board = median_time(one, args.runs), median_time(board, args.runs)
        raw_check = read_once(engine, ids, start, end, 120.0)
        report = roll_up(engine=engine, max_hours=int(args.hours) + 2)
        if engine_name == "postgresql":
            with engine.connect() as conn:
                conn.exec_driver_sql("ANALYZE")
                conn.commit()
        roll_one, roll_board = median_time(one, args.runs), median_time(board, args.runs)
        same = buckets(read_once(engine, ids, start, end, 120.0), 120.0) == buckets(raw_check, 120)
        points = board()
    finally:
        engine.dispose()
    print(
        f"{engine_name}: {rows:,} samples of {len(ids)} series over {args.hours:g} h "
        f"(stored in {filled:.1f} s)\n"
        f"  read, step {step:g} s, one call:      raw {raw_one:6.3f} s   rollups {roll_one:6.3f} s"
        f"   ({raw_one / roll_one:.1f}x)\n"
        f"  read, step {step:g} s, {args.groups} queries x4: raw {raw_board:6.3f} s   "
        f"rollups {roll_board:6.3f} s   ({raw_board / roll_board:.1f}x, {points:,} points)\n"
        f"  rollup job: {len(report.hours)} hours ({report.minutes:,} minutes) in "
        f"{report.seconds:.2f} s; step 120 s buckets keep raw extremes: {same}"
    )


def main() -> int:
    """Run the benchmark on each engine asked for."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--hours", type=float, default=24.0)
    ap.add_argument("--series", type=int, default=130)
    ap.add_argument("--step", type=float, default=144.0)
    ap.add_argument("--groups", type=int, default=17, help="queries of the board-like read")
    ap.add_argument("--runs", type=int, default=5, help="timed reads per case (median)")
    ap.add_argument("--engines", default="sqlite,postgresql")
    args = ap.parse_args()
    print(f"median of {args.runs} reads after one warm-up; medians are server-side read_range")
    for name in args.engines.split(","):
        if name == "sqlite":
            run(name, f"sqlite:///{tempfile.mkdtemp(prefix='causeline-rollup-')}/bench.db", args)
            continue
        db = f"causeline_bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{db}"')
        try:
            base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
            run(name, f"{base}/{db}", args)
        finally:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    sys.exit(main())
