"""What a keyed sample row costs each engine by itself, with no service in front.

Usage: .venv/bin/python benchmarks/keyed_rows.py [--batches 200] [--engines sqlite,postgresql]

Writes the same batches (500 series x 20 points each, sorted by key, as ``store_batch``
sends them) the store's own way into tables that differ only in their key:
- PostgreSQL, binary COPY: ``samples``' layout (primary key (hour, series_id, ts)), the same
  table UNLOGGED (no WAL), and an unindexed table; rows/s and WAL bytes a row.
- SQLite, through the store's own insert (``samples._insert_sqlite``): ``samples``' WITHOUT
  ROWID layout and an unindexed table; and the same parameters bound to statements that
  write nothing (parameter binding alone).

``benchmarks/ingest.py`` compares end-to-end ingest with an unindexed table; this shows how
much of the gap is the engine's B-tree, which no change in the service can remove.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from correlator.store.dialect import qmark_rows, sqlite_rows_per_statement  # noqa: E402
from correlator.store.engine import SQLITE_PAGE_SIZE  # noqa: E402
from correlator.store.tsdb.write import (  # noqa: E402
    _SQLITE_ROWS,
    SampleColumns,
    _copy_binary,
    _insert_sqlite,
    _sqlite_params,
)

PG_ADMIN = os.environ.get("CAUSELINE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
SERIES, POINTS = 500, 20
COLUMNS = "(hour int4, series_id int4, ts int8, value float8"
PG_TABLES = {
    "keyed": f"CREATE TABLE t {COLUMNS}, PRIMARY KEY (hour, series_id, ts))",
    "keyed, unlogged": f"CREATE UNLOGGED TABLE t {COLUMNS}, PRIMARY KEY (hour, series_id, ts))",
    "unindexed": f"CREATE TABLE t {COLUMNS})",
}
SQLITE_KEYED = (
    "CREATE TABLE samples (hour INTEGER NOT NULL, series_id INTEGER NOT NULL, ts INTEGER NOT NULL, "
    "value REAL, PRIMARY KEY (hour, series_id, ts)) WITHOUT ROWID"
)
SQLITE_PLAIN = "CREATE TABLE samples (hour INTEGER, series_id INTEGER, ts INTEGER, value REAL)"
SQLITE_BIND_ONLY = "SELECT 1 WHERE 0 AND 1 IN (VALUES {})"


def make_batches(count: int, seed: int = 0) -> list[SampleColumns]:
    """Return batches of 500 series x 20 points: 40 series sets, then the next 20 points."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        sid = np.repeat(np.arange(SERIES) + (k % 40) * SERIES, POINTS).astype(np.int64)
        first = 1_700_000_000_000 + (k // 40) * POINTS * 15_000
        ts = np.tile(first + np.arange(POINTS) * 15_000, SERIES).astype(np.int64)
        hour = ts // 3_600_000
        order = np.lexsort((ts, sid, hour))
        value = rng.random(ts.size)
        out.append(SampleColumns(hour[order], sid[order], ts[order], value[order]))
    return out


def postgres(batches: list[SampleColumns]) -> None:
    """Print binary-COPY rows/s and WAL bytes a row into each PostgreSQL table."""
    datas = [_copy_binary(b) for b in batches]
    rows = sum(len(b) for b in batches)
    name = f"causeline_keyed_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    url = PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    try:
        for label, ddl in PG_TABLES.items():
            with psycopg.connect(url, autocommit=True) as c:
                c.execute("DROP TABLE IF EXISTS t")
                c.execute(ddl)
                c.execute("CHECKPOINT")
                wal0 = c.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
            with psycopg.connect(url) as c:
                start = time.perf_counter()
                for data in datas:
                    with c.cursor() as cur, cur.copy("COPY t FROM STDIN (FORMAT BINARY)") as cp:
                        cp.write(data)
                    c.commit()
                rate = rows / (time.perf_counter() - start)
                wal = c.execute(
                    "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s)", (wal0,)
                ).fetchone()[0]
            print(
                f"postgresql {label:16s} {rate:>10,.0f} rows/s  WAL {float(wal) / rows:5.0f} B/row"
            )
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _bind_only(conn: sqlite3.Connection, cols: SampleColumns) -> None:
    """Bind a batch's parameters as ``_insert_sqlite`` does, to statements that write nothing."""
    flat, n, at = _sqlite_params(cols), len(cols), 0
    step = sqlite_rows_per_statement(conn, 4, _SQLITE_ROWS)
    while at < n:
        size = step if n - at >= step else 1 << ((n - at).bit_length() - 1)
        conn.execute(SQLITE_BIND_ONLY.format(qmark_rows(size, 4)), flat[4 * at : 4 * (at + size)])
        at += size


def _sqlite_rate(path: Path, ddl: str, write, batches: list[SampleColumns]) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA page_size={SQLITE_PAGE_SIZE}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(ddl)
    start = time.perf_counter()
    for b in batches:
        conn.execute("BEGIN")
        write(conn, b)
        conn.execute("COMMIT")
    rate = sum(len(b) for b in batches) / (time.perf_counter() - start)
    conn.close()
    return rate


def sqlite(batches: list[SampleColumns]) -> None:
    """Print the store's INSERT rows/s into each SQLite table, and binding alone."""
    with tempfile.TemporaryDirectory() as tmp:
        for label, ddl, write in (
            ("keyed", SQLITE_KEYED, _insert_sqlite),
            ("unindexed", SQLITE_PLAIN, _insert_sqlite),
            ("binding only", SQLITE_KEYED, _bind_only),
        ):
            rate = _sqlite_rate(Path(tmp) / f"{label[:4]}.db", ddl, write, batches)
            print(f"sqlite     {label:16s} {rate:>10,.0f} rows/s")


def main() -> None:
    """Write the batches into every table of each engine and print the rates."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=int, default=200, help="batches of 10,000 rows")
    ap.add_argument("--engines", default="sqlite,postgresql")
    args = ap.parse_args()
    batches = make_batches(args.batches)
    print(f"{args.batches} batches of {SERIES} series x {POINTS} points")
    for engine in args.engines.split(","):
        {"sqlite": sqlite, "postgresql": postgres}[engine](batches)


if __name__ == "__main__":
    main()
