"""Run ``causeline`` with the sample rows written another way: ``none`` or a ``runs`` head.

``benchmarks/ingest.py --ceiling`` and ``--runs`` serve through this. The first argument
names the head; the rest go to ``causeline``. Everything else of a batch runs as usual
(body, validation, series lookup and creation, events, the transaction and its commit).

- ``none`` counts the rows without writing them: the rate of the request path alone, the
  most any layout of the samples could give the service.
- ``runs`` is a prototype head: a batch's points of one series in one hour go into one row
  of ``bench_sample_runs`` (hour, series_id, first_ts, last_ts, n, and the timestamps and
  values as little-endian arrays), keyed (hour, series_id, first_ts). Nothing reads it and
  no overlap with stored samples is checked, so its rate is an upper bound for such a head.

    CAUSELINE_DATABASE_URL=sqlite:///runs.db python benchmarks/serve_head.py runs serve
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from causeline.cli import main  # noqa: E402
from correlator.store import ingest  # noqa: E402
from correlator.store.engine import driver_connection, make_engine, write_transaction  # noqa: E402
from correlator.store.samples import SampleColumns  # noqa: E402

_RUNS_TABLE = {
    "postgresql": "(hour int4, series_id int4, first_ts int8, last_ts int8, n int4, ts bytea, "
    "value bytea, PRIMARY KEY (hour, series_id, first_ts))",
    "sqlite": "(hour INTEGER, series_id INTEGER, first_ts INTEGER, last_ts INTEGER, n INTEGER, "
    "ts BLOB, value BLOB, PRIMARY KEY (hour, series_id, first_ts)) WITHOUT ROWID",
}


def count_only(*, conn: object, cols: SampleColumns) -> int:
    """Report every row as new without writing it."""
    return len(cols)


def create_runs_table(url: str) -> None:
    """Create the prototype table in the store, once, before serving."""
    engine = make_engine(url)
    with write_transaction(engine) as conn:
        table = _RUNS_TABLE[conn.dialect.name]
        conn.exec_driver_sql(f"CREATE TABLE IF NOT EXISTS bench_sample_runs {table}")
    engine.dispose()


def write_runs(*, conn, cols: SampleColumns) -> int:
    """Write one row per (series, hour) run of the key-sorted rows; return the samples."""
    if not len(cols):
        return 0
    cut = (np.diff(cols.series_id) != 0) | (np.diff(cols.hour) != 0)
    starts = np.flatnonzero(np.r_[True, cut])
    ends = np.r_[starts[1:], len(cols)]
    ts, values = cols.ts.astype("<i8"), cols.value.astype("<f8")
    rows = [
        (int(cols.hour[a]), int(cols.series_id[a]), int(ts[a]), int(ts[b - 1]), int(b - a),
         ts[a:b].tobytes(), values[a:b].tobytes())
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
    ]  # fmt: skip
    raw = driver_connection(conn)
    if conn.dialect.name == "postgresql":
        with raw.cursor() as cur, cur.copy("COPY bench_sample_runs FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    else:
        cur = raw.cursor()
        try:
            cur.executemany(
                "INSERT INTO bench_sample_runs VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                rows,
            )
        finally:
            cur.close()
    return len(cols)


WRITERS = {"none": count_only, "runs": write_runs}

if __name__ == "__main__":
    head = sys.argv.pop(1)
    if head == "runs":
        create_runs_table(os.environ["CAUSELINE_DATABASE_URL"])
    ingest.insert_columns = WRITERS[head]  # store_batch looks it up at each call
    sys.exit(main())
