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
- ``checked`` is ``runs`` plus the check a real head needs so a resend counts 0 and no
  timestamp is stored twice: one query a batch asks each series' last stored timestamp in
  the batch's hour; a run that begins after it goes in as is (the usual fresh batch), any
  other is checked against the stored runs it overlaps and loses the timestamps they hold.

    CAUSELINE_DATABASE_URL=sqlite:///runs.db python benchmarks/serve_head.py runs serve
"""

from __future__ import annotations

import os
import sys
from contextlib import closing
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


def _bounds(cols: SampleColumns) -> tuple[list[int], list[int]]:
    """Return where each (series, hour) run of the key-sorted rows starts and ends."""
    cut = (np.diff(cols.series_id) != 0) | (np.diff(cols.hour) != 0)
    starts = np.flatnonzero(np.r_[True, cut])
    return starts.tolist(), np.r_[starts[1:], len(cols)].tolist()


def _row(hour: int, sid: int, ts: np.ndarray, values: np.ndarray) -> tuple:
    """Return the table row of one run: little-endian int64 ms and float64 values."""
    return (hour, sid, int(ts[0]), int(ts[-1]), len(ts), ts.tobytes(), values.tobytes())


def write_runs(*, conn, cols: SampleColumns) -> int:
    """Write one row per (series, hour) run of the key-sorted rows; return the samples."""
    if not len(cols):
        return 0
    starts, ends = _bounds(cols)
    ts, values = cols.ts.astype("<i8"), cols.value.astype("<f8")
    rows = [
        _row(int(cols.hour[a]), int(cols.series_id[a]), ts[a:b], values[a:b])
        for a, b in zip(starts, ends, strict=True)
    ]
    _insert(conn, rows)
    return len(cols)


def _last_stored(conn, hour: int, ids: list[int]) -> dict[int, int]:
    """Return each series' last stored timestamp in the hour (series with runs only)."""
    raw = driver_connection(conn)
    with closing(raw.cursor()) as cur:
        if conn.dialect.name == "postgresql":
            # A probe of the key per series: a fresh table has no statistics, and a plain
            # IN list then gets a sequential scan of all of it per batch.
            cur.execute(
                "SELECT s.id, (SELECT MAX(last_ts) FROM bench_sample_runs r "
                "WHERE r.hour = %s AND r.series_id = s.id) AS last "
                "FROM unnest(%s::int4[]) AS s(id)",
                (hour, ids),
            )
            return {sid: last for sid, last in cur.fetchall() if last is not None}
        marks = ",".join("?" * len(ids))
        cur.execute(
            "SELECT series_id, MAX(last_ts) FROM bench_sample_runs "
            f"WHERE hour = ? AND series_id IN ({marks}) GROUP BY series_id",
            (hour, *ids),
        )
        return dict(cur.fetchall())


def _held(conn, hour: int, sid: int, first: int, last: int) -> np.ndarray:
    """Return the stored timestamps of the series' runs that overlap [first, last]."""
    raw = driver_connection(conn)
    mark = "%s" if conn.dialect.name == "postgresql" else "?"
    with closing(raw.cursor()) as cur:
        cur.execute(
            f"SELECT ts FROM bench_sample_runs WHERE hour = {mark} AND series_id = {mark} "
            f"AND first_ts <= {mark} AND last_ts >= {mark}",
            (hour, sid, last, first),
        )
        blobs = [bytes(b) for (b,) in cur.fetchall()]
    return np.frombuffer(b"".join(blobs), "<i8")


def write_checked_runs(*, conn, cols: SampleColumns) -> int:
    """Write the runs of the rows less the timestamps stored runs hold; return how many new."""
    if not len(cols):
        return 0
    starts, ends = _bounds(cols)
    ts, values = cols.ts.astype("<i8"), cols.value.astype("<f8")
    ids_by_hour: dict[int, list[int]] = {}
    for a in starts:
        ids_by_hour.setdefault(int(cols.hour[a]), []).append(int(cols.series_id[a]))
    last = {
        (hour, sid): t
        for hour, ids in ids_by_hour.items()
        for sid, t in _last_stored(conn, hour, ids).items()
    }
    rows, new = [], 0
    for a, b in zip(starts, ends, strict=True):
        hour, sid = int(cols.hour[a]), int(cols.series_id[a])
        run_ts, run_values = ts[a:b], values[a:b]
        stored = last.get((hour, sid))
        if stored is not None and run_ts[0] <= stored:  # may overlap: drop what is held
            keep = ~np.isin(run_ts, _held(conn, hour, sid, int(run_ts[0]), int(run_ts[-1])))
            run_ts, run_values = run_ts[keep], run_values[keep]
            if not run_ts.size:
                continue
        rows.append(_row(hour, sid, run_ts, run_values))
        new += int(run_ts.size)
    _insert(conn, rows)
    return new


def _insert(conn, rows: list[tuple]) -> None:
    """Write run rows: SQLite skips one already stored, PostgreSQL's COPY fails on it.

    So ``runs`` on PostgreSQL takes no resend; ``checked`` sends only runs not stored.
    """
    if not rows:
        return
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


WRITERS = {"none": count_only, "runs": write_runs, "checked": write_checked_runs}

if __name__ == "__main__":
    head = sys.argv.pop(1)
    if head in ("runs", "checked"):
        create_runs_table(os.environ["CAUSELINE_DATABASE_URL"])
    ingest.insert_columns = WRITERS[head]  # store_batch looks it up at each call
    sys.exit(main())
