"""What the head's row layout costs the database alone, before any server work.

For each engine it writes the same samples three ways, in batches shaped like
``ingest.py``'s (``--points`` consecutive points of each of ``--batch / --points`` series):

- ``raw``: one row per sample into an unindexed table (the ingest benchmark's raw path);
- ``rows``: one row per sample keyed (hour, series_id, ts), today's ``samples`` head;
- ``runs``: one row per series per batch, keyed (hour, series_id, first_ts), timestamps
  and values as little-endian arrays: a head that stores each batch's run of a series.

It prints samples/s and bytes per sample of each. The head needs a key (idempotent writes,
reads by series); these figures say how much of the ingest ratio a layout can reach.

    python benchmarks/head_layout.py --samples 2000000 --points 20
    python benchmarks/head_layout.py --samples 500000 --points 1 --engines postgresql
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg

PG_ADMIN = os.environ.get("CAUSELINE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
T0_MS = 1_700_000_000_000
HOUR_MS = 3_600_000
TABLES = {
    "raw": "(series_id int4, ts int8, value float8)",
    "rows": "(hour int4, series_id int4, ts int8, value float8, PRIMARY KEY (hour, series_id, ts))",
    "runs": "(hour int4, series_id int4, first_ts int8, last_ts int8, n int4, ts {blob}, "
    "value {blob}, PRIMARY KEY (hour, series_id, first_ts))",
}


def batches(total: int, batch: int, n_series: int, points: int) -> Iterator[tuple]:
    """Yield (series ids, ms timestamps) per batch, as ingest.py's bodies lay them out."""
    per, sent, step = max(batch // points, 1), 0, 0
    while sent < total:
        first, window = (step * per) % n_series, (step * per) // n_series
        ts = T0_MS + 15_000 * (window * points + np.arange(points, dtype=np.int64))
        yield ((first + np.arange(per)) % n_series).tolist(), ts
        sent += per * points
        step += 1


def records(layout: str, sids: list[int], ts: np.ndarray) -> list[tuple]:
    """Return one batch's rows in a layout."""
    values = np.arange(len(ts), dtype=np.float64)
    if layout == "runs":
        first, last, hour = int(ts[0]), int(ts[-1]), int(ts[0]) // HOUR_MS
        tb, vb = ts.astype("<i8").tobytes(), values.astype("<f8").tobytes()
        return [(hour, s, first, last, len(ts), tb, vb) for s in sids]
    stamps, vals = ts.tolist(), values.tolist()
    if layout == "rows":
        return [(t // HOUR_MS, s, t, v) for s in sids for t, v in zip(stamps, vals, strict=True)]
    return [(s, t, v) for s in sids for t, v in zip(stamps, vals, strict=True)]


def run_sqlite(args, folder: Path) -> dict[str, tuple[float, float]]:
    """Return layout -> (samples/s, bytes per sample) on SQLite (WAL, synchronous=NORMAL)."""
    out = {}
    for layout, columns in TABLES.items():
        path = folder / f"{layout}.db"
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        rowid = "" if layout == "raw" else " WITHOUT ROWID"
        conn.execute(f"CREATE TABLE t {columns.format(blob='BLOB')}{rowid}")
        start = time.perf_counter()
        for sids, ts in batches(args.samples, args.batch, args.series, args.points):
            rows = records(layout, sids, ts)
            with conn:
                conn.executemany(f"INSERT INTO t VALUES ({','.join('?' * len(rows[0]))})", rows)
        rate = args.samples / (time.perf_counter() - start)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        out[layout] = (rate, path.stat().st_size / args.samples)
    return out


def run_postgres(args) -> dict[str, tuple[float, float]]:
    """Return layout -> (samples/s, bytes per sample, indexes included) on PostgreSQL."""
    out = {}
    with psycopg.connect(PG_ADMIN) as conn:
        for layout, columns in TABLES.items():
            table = f"head_layout_{layout}"
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute(f"CREATE TABLE {table} {columns.format(blob='bytea')}")
            conn.commit()
            start = time.perf_counter()
            for sids, ts in batches(args.samples, args.batch, args.series, args.points):
                with conn.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN") as copy:
                    for row in records(layout, sids, ts):
                        copy.write_row(row)
                conn.commit()
            rate = args.samples / (time.perf_counter() - start)
            size = conn.execute(f"SELECT pg_total_relation_size('{table}')").fetchone()[0]
            conn.execute(f"DROP TABLE {table}")
            conn.commit()
            out[layout] = (rate, size / args.samples)
    return out


def main(argv: list[str] | None = None) -> int:
    """Print each engine's rate and size per layout."""
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example: .venv/bin/python benchmarks/head_layout.py --samples 2000000 --points 20",
    )
    ap.add_argument("--samples", type=int, default=2_000_000)
    ap.add_argument("--batch", type=int, default=10_000, help="samples per batch")
    ap.add_argument("--series", type=int, default=20_000, help="distinct series")
    ap.add_argument("--points", type=int, default=20, help="points per series per batch")
    ap.add_argument("--engines", default="sqlite,postgresql")
    args = ap.parse_args(argv)
    print(
        f"{args.samples:,} samples, {args.points} points per series per batch, "
        f"{args.batch:,} samples per batch"
    )
    results = {}
    if "sqlite" in args.engines:
        with tempfile.TemporaryDirectory() as tmp:
            results["sqlite"] = run_sqlite(args, Path(tmp))
    if "postgresql" in args.engines:
        results["postgresql"] = run_postgres(args)
    for engine, found in results.items():
        raw = found["raw"][0]
        for layout, (rate, size) in found.items():
            print(
                f"{engine:10s} {layout:5s} {rate:>12,.0f} samples/s  "
                f"{rate / raw:5.2f} of raw  {size:6.1f} bytes/sample"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
