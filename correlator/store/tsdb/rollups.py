"""The rollup job: rebuild the 1-minute rollups of each complete hour of samples.

A pass rolls up, newest first, at most ``max_hours`` hours that ended ``lag_seconds`` ago
and are not ROLLED (new, STALE after a late sample, or left BUILDING by a crash). Each hour
is rebuilt from its raw and chunked samples, never incremented, so replayed ingest and
repeated passes change nothing. The service runs a pass under the retention lease
(``maintain_once`` in ``correlator.store.tsdb.retention``); ``roll_up`` runs one on demand.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from sqlalchemy import Connection, Engine

from correlator.store.engine import driver_connection, write_transaction
from correlator.store.tsdb import chunks, head
from correlator.store.tsdb.rollup_state import (
    BUILDING,
    COMPACTED,
    EXPIRED,
    EXPIRED_LATE,
    HOUR_MS,
    MIN_LAG_S,
    MINUTE_MS,
    ROLLED,
    hour_states,
    open_hour,
)

REBUILD_SERIES = 200  # series a chunked hour is rolled up by at a time (memory, not speed)

_SELECT = (
    'INSERT INTO samples_1m (hour, series_id, ts, "min", "max", "sum", "count") '
    "SELECT hour, series_id, (ts / 60000) * 60000, MIN(value), MAX(value), SUM(value), "
    "COUNT(value) FROM samples WHERE hour IN ({hours}) GROUP BY hour, series_id, ts / 60000 "
    "ORDER BY hour, series_id, 3 "  # in key order: PostgreSQL's heap then follows the index
)
# A rebuild replaces (two passes at once write the same rows); a merge adds late raw rows
# to minutes whose raw samples are gone.
_REPLACE = (
    'ON CONFLICT (hour, series_id, ts) DO UPDATE SET "min" = excluded."min", '
    '"max" = excluded."max", "sum" = excluded."sum", "count" = excluded."count"'
)
_COMBINE = {
    "postgresql": (
        'LEAST(samples_1m."min", excluded."min")',
        'GREATEST(samples_1m."max", excluded."max")',
    ),
    "sqlite": (
        'coalesce(min(samples_1m."min", excluded."min"), samples_1m."min", excluded."min")',
        'coalesce(max(samples_1m."max", excluded."max"), samples_1m."max", excluded."max")',
    ),
}
_TOTAL = (
    'CASE WHEN samples_1m."sum" IS NULL THEN excluded."sum" '
    'WHEN excluded."sum" IS NULL THEN samples_1m."sum" ELSE samples_1m."sum" + excluded."sum" END'
)
DONE = (ROLLED, EXPIRED, EXPIRED_LATE, COMPACTED)  # hours a pass leaves alone
_INSERT = (
    'INSERT INTO samples_1m (hour, series_id, ts, "min", "max", "sum", "count") '
    "VALUES ({marks}) " + _REPLACE
)


@dataclass
class RollupReport:
    """What one rollup pass did."""

    hours: list[int] = field(default_factory=list)
    minutes: int = 0
    pending: int = 0  # complete hours still to roll up after this pass
    seconds: float = 0.0

    def as_dict(self) -> dict:
        """Return the report as plain data."""
        return asdict(self)


def _list(hours: Sequence[int]) -> str:
    return ",".join(str(int(h)) for h in hours)


def rebuild_hours(*, conn: Connection, hours: Sequence[int]) -> int:
    """Replace the rollups of these hours by those of their samples; return minutes written.

    Hours without chunks roll up in the database; chunked ones (``store/tsdb/chunks.py``) here.
    """
    if not hours:
        return 0
    conn.exec_driver_sql(f"DELETE FROM samples_1m WHERE hour IN ({_list(hours)})")
    chunked = chunks.chunked_hours(conn=conn, hours=hours)
    plain = [h for h in hours if h not in chunked]
    written = 0
    if plain:
        result = conn.exec_driver_sql(_SELECT.format(hours=_list(plain)) + _REPLACE)
        written += max(result.rowcount, 0)
    for hour in sorted(chunked):
        written += _rebuild_chunked(conn, hour)
    return written


def minute_rows(hour: int, arr: np.ndarray) -> list[tuple]:
    """Return one hour's samples_1m rows (hour, series_id, ts, min, max, sum, count).

    Of (series_id, ms, value) rows sorted by both, as the database does it: NaN is not
    counted; a minute of NaN only has count 0.
    """
    minute = arr[:, 1] // MINUTE_MS * MINUTE_MS
    new = np.r_[True, (np.diff(arr[:, 0]) != 0) | (np.diff(minute) != 0)]
    starts = np.flatnonzero(new)
    values = arr[:, 2]
    nan = np.isnan(values)
    count = np.add.reduceat((~nan).astype(np.int64), starts)
    low = np.fmin.reduceat(values, starts)
    high = np.fmax.reduceat(values, starts)
    with np.errstate(invalid="ignore"):  # inf and -inf in one minute: NaN, as SQL's SUM
        total = np.add.reduceat(np.where(nan, 0.0, values), starts)
    series = arr[starts, 0].astype(np.int64).tolist()
    stamps = minute[starts].astype(np.int64).tolist()
    return [
        (hour, sid, ts, lo, hi, t, n) if n else (hour, sid, ts, None, None, None, 0)
        for sid, ts, lo, hi, t, n in zip(
            series, stamps, low.tolist(), high.tolist(), total.tolist(), count.tolist(), strict=True
        )
    ]


_PG_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS samples_1m_staging (hour int4, series_id int4, ts int8, "
    '"min" float8, "max" float8, "sum" float8, "count" int4) ON COMMIT DELETE ROWS'
)
_PG_COLUMNS = 'hour, series_id, ts, "min", "max", "sum", "count"'


def _write_minutes(conn: Connection, rows: list[tuple]) -> None:
    """Write samples_1m rows through the driver: SQLAlchemy's per-row work cost 5 times more.

    PostgreSQL takes them by COPY into a staging table, then one INSERT: executemany cost
    about 15 us a row.
    """
    cur = driver_connection(conn).cursor()
    try:
        if conn.dialect.name != "postgresql":
            cur.executemany(_INSERT.format(marks=", ".join("?" * 7)), rows)
            return
        cur.execute(_PG_STAGING)
        with cur.copy(f"COPY samples_1m_staging ({_PG_COLUMNS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cur.execute(
            f"INSERT INTO samples_1m ({_PG_COLUMNS}) SELECT {_PG_COLUMNS} FROM "
            "samples_1m_staging ORDER BY hour, series_id, ts " + _REPLACE
        )
        cur.execute("TRUNCATE samples_1m_staging")
    finally:
        cur.close()


def _rebuild_chunked(conn: Connection, hour: int) -> int:
    """Roll up one hour from its chunks, runs and raw samples; return minutes written.

    ``REBUILD_SERIES`` chunked series at a time, with the raw samples of their range of
    ids, so memory holds a piece of the hour, not all of it.
    """
    ids = sorted(
        {
            r[0]
            for r in conn.exec_driver_sql(
                "SELECT DISTINCT series_id FROM sample_chunks "
                f"WHERE hour >= {chunks.day_start(hour)} AND hour <= {int(hour)} "
                f"AND end_hour >= {int(hour)}"
            )
        }.union(head.series_of(conn=conn, hour=hour))
    )
    window = (hour * HOUR_MS, (hour + 1) * HOUR_MS - 1)
    piece, written = REBUILD_SERIES, 0
    for k in range(0, max(len(ids), 1), piece):  # raw ids below the first go with it
        chunked = ids[k : k + piece]
        stop = ids[k + piece] if k + piece < len(ids) else None
        held = chunks.window_array(conn=conn, series_ids=chunked, hours=[hour], window=window)
        raw = chunks.raw_array(conn=conn, hours=[hour], series=(chunked[0] if k else 0, stop))
        arr = np.concatenate([held, raw])
        if not len(arr):
            continue
        arr = arr[np.lexsort((arr[:, 1], arr[:, 0]))]
        twin = np.r_[False, (np.diff(arr[:, 0]) == 0) & (np.diff(arr[:, 1]) == 0)]
        rows = minute_rows(hour, arr[~twin])
        _write_minutes(conn, rows)
        written += len(rows)
    return written


def merge_hours(*, conn: Connection, hours: Sequence[int]) -> int:
    """Add the raw samples of these hours to their rollups; return minutes written."""
    if not hours:
        return 0
    low, high = _COMBINE[conn.dialect.name]
    result = conn.exec_driver_sql(
        _SELECT.format(hours=_list(hours))
        + f'ON CONFLICT (hour, series_id, ts) DO UPDATE SET "min" = {low}, "max" = {high}, '
        f'"sum" = {_TOTAL}, "count" = samples_1m."count" + excluded."count"'
    )
    return max(result.rowcount, 0)


def pending_hours(*, conn: Connection, end_hour: int) -> list[int]:
    """Return the hours before end_hour not rolled up, newest first.

    Those that hold raw samples, and any left in another state (stale, building): an empty
    hour between two far apart (a clock at zero) has nothing to roll up.
    """
    raw = chunks.raw_hours(conn=conn, end_hour=end_hour)
    states = hour_states(conn=conn, first=raw[0], last=raw[-1]) if raw else {}
    waiting = conn.exec_driver_sql(
        f"SELECT hour FROM samples_1m_hours WHERE hour < {int(end_hour)} "
        f"AND state NOT IN ({_list(DONE)})"
    ).scalars()
    return sorted({h for h in raw if states.get(h) not in DONE}.union(waiting), reverse=True)


def roll_up(
    *,
    engine: Engine,
    now: float | None = None,
    lag_seconds: float = 300.0,
    max_hours: int = 24,
) -> RollupReport:
    """Roll up at most max_hours complete hours not rolled up yet, newest first."""
    began = time.perf_counter()
    report = RollupReport()
    with engine.connect() as conn:
        todo = pending_hours(
            conn=conn, end_hour=open_hour(now=now, seconds=max(lag_seconds, MIN_LAG_S))
        )
    report.pending = max(len(todo) - max_hours, 0)
    for hour in todo[:max_hours]:
        with write_transaction(engine) as conn:  # committed first: ingest now sees the row
            conn.exec_driver_sql(
                f"INSERT INTO samples_1m_hours (hour, state) VALUES ({hour}, {BUILDING}) "
                f"ON CONFLICT (hour) DO UPDATE SET state = {BUILDING} "
                f"WHERE samples_1m_hours.state NOT IN ({_list(DONE)})"
            )
        with write_transaction(engine) as conn:
            state = conn.exec_driver_sql(
                f"SELECT state FROM samples_1m_hours WHERE hour = {hour}"
            ).scalar()
            if state != BUILDING:  # rolled or expired meanwhile, or made stale: a later pass
                continue
            report.minutes += rebuild_hours(conn=conn, hours=[hour])
            # Last, so a sample committed since the rebuild's read leaves the hour stale.
            conn.exec_driver_sql(
                f"UPDATE samples_1m_hours SET state = {ROLLED} "
                f"WHERE hour = {hour} AND state = {BUILDING}"
            )
        report.hours.append(hour)
    report.seconds = round(time.perf_counter() - began, 3)
    return report
