"""Bulk, idempotent sample writes and range reads, on each engine's fast path.

Samples are keyed (hour, series_id, ts): ``hour`` is the unix hour of ``ts`` (unix
milliseconds). Fresh data of every series lands in the newest hour, so writes stay in
a small, cached part of the index; a range read seeks each hour of the window.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import psycopg
from sqlalchemy import Connection

from correlator.store.bounds import TooManyPoints, check_deadline
from correlator.store.partitions import prepare_for_rows
from correlator.store.series import CHUNK

HOUR_MS = 3_600_000
Row = tuple[int, int, int, float | None]  # (hour, series_id, ts ms, value)

_SQLITE_INSERT = (
    "INSERT INTO samples (hour, series_id, ts, value) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
_PG_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS samples_staging "
    "(hour int4, series_id int4, ts int8, value float8) ON COMMIT DELETE ROWS"
)
_PG_MERGE = (
    "INSERT INTO samples (hour, series_id, ts, value) "
    "SELECT hour, series_id, ts, value FROM samples_staging ORDER BY hour, series_id, ts "
    "ON CONFLICT DO NOTHING"
)


@dataclass(slots=True)
class SeriesData:
    """Samples of one stored series as numpy arrays (seconds, values with NaN)."""

    series_id: int
    ts: np.ndarray
    values: np.ndarray


def sample_rows(
    series_ids: Sequence[int],
    timestamps: Sequence[Sequence[float]],
    values: Sequence[Sequence[float]],
) -> list[Row]:
    """Return storable rows of several series, sorted by key; NaN becomes NULL."""
    lengths = [len(ts) for ts in timestamps]
    total = sum(lengths)
    sid = np.repeat(np.asarray(series_ids, dtype=np.int64), lengths)
    millis = np.rint(np.fromiter(chain.from_iterable(timestamps), np.float64, total) * 1000)
    millis = millis.astype(np.int64)
    hours = millis // HOUR_MS
    order = np.lexsort((millis, sid, hours))
    flat = np.fromiter(chain.from_iterable(values), np.float64, total)[order]
    cols = (hours[order].tolist(), sid[order].tolist(), millis[order].tolist())
    if not np.isnan(flat).any():
        return list(zip(*cols, flat.tolist(), strict=True))
    return list(zip(*cols, [None if math.isnan(v) else v for v in flat.tolist()], strict=True))


def insert_rows(*, conn: Connection, rows: list[Row]) -> int:
    """Insert rows (as from ``sample_rows``), skipping stored ones; return how many were new."""
    if not rows:
        return 0
    raw = conn.connection.driver_connection
    if conn.dialect.name == "postgresql":
        # Rows come sorted by hour (sample_rows): the first and last give the day range.
        prepare_for_rows(conn=conn, first_hour=rows[0][0], last_hour=rows[-1][0])
        return _copy_postgres(raw, rows)
    cur = raw.cursor()
    try:
        cur.executemany(_SQLITE_INSERT, rows)
        return cur.rowcount
    finally:
        cur.close()


def _pg_float(value: float | None) -> str:
    if value is None:
        return "\\N"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _copy_text(rows: list[Row]) -> str:
    try:
        plain = math.isfinite(sum(r[3] for r in rows))
    except TypeError:  # a None (NaN) among them
        plain = False
    if plain:
        return "".join([f"{h}\t{s}\t{t}\t{v!r}\n" for h, s, t, v in rows])
    return "".join([f"{h}\t{s}\t{t}\t{_pg_float(v)}\n" for h, s, t, v in rows])


def _copy_postgres(raw, rows: list[Row]) -> int:
    """COPY straight into samples; on a duplicate, COPY into staging and merge instead."""
    text = _copy_text(rows)
    with raw.cursor() as cur:
        cur.execute("SAVEPOINT samples_copy")
        try:
            with cur.copy("COPY samples (hour, series_id, ts, value) FROM STDIN") as copy:
                copy.write(text)
            cur.execute("RELEASE SAVEPOINT samples_copy")
            return len(rows)
        except psycopg.errors.UniqueViolation:
            cur.execute("ROLLBACK TO SAVEPOINT samples_copy")
        cur.execute(_PG_STAGING)
        with cur.copy("COPY samples_staging (hour, series_id, ts, value) FROM STDIN") as copy:
            copy.write(text)
        cur.execute(_PG_MERGE)
        inserted = cur.rowcount
        cur.execute("TRUNCATE samples_staging")
        return inserted


MAX_LISTED_HOURS = 200


def _where(postgres: bool, ids: list[int], hours: range, lo: int, hi: int) -> tuple[str, list]:
    # A short window seeks each hour; a long one scans the hour range once.
    listed = len(hours) <= MAX_LISTED_HOURS
    if postgres:
        hour_sql = "hour = ANY(%s)" if listed else "hour BETWEEN %s AND %s"
        params: list = [list(hours)] if listed else [hours[0], hours[-1]]
        sql = f"{hour_sql} AND series_id = ANY(%s) AND ts >= %s AND ts <= %s"
        return sql, [*params, ids, lo, hi]
    hour_sql = f"hour IN ({','.join('?' * len(hours))})" if listed else "hour BETWEEN ? AND ?"
    params = list(hours) if listed else [hours[0], hours[-1]]
    sql = f"{hour_sql} AND series_id IN ({','.join('?' * len(ids))}) AND ts >= ? AND ts <= ?"
    return sql, [*params, *ids, lo, hi]


# Where a table keeps its values: raw samples have one; 1-minute rollups a min, max and mean.
RAW = ("samples", "value", "value", "value")
ROLLUP = ("samples_1m", '"min"', '"max"', '"sum" / "count"')


def _minmax_sql(postgres: bool, where: str, step_ms: int, source: tuple) -> str:
    """Return a query for each step bucket's lowest and highest value (NaN left out)."""
    table, low, high, _ = source
    bucket = f"ts / {int(step_ms)}"  # an int we computed, written inline so both parts match
    if postgres:
        part = (
            "(SELECT DISTINCT ON (series_id, {b}) series_id, ts, {v} FROM {t} WHERE {w} "
            "AND {v} IS NOT NULL ORDER BY series_id, {b}, {v} {o})"
        )
        return " UNION ALL ".join(
            part.format(b=bucket, v=v, t=table, w=where, o=o)
            for v, o in ((low, "ASC"), (high, "DESC"))
        )
    # SQLite returns the row holding the MIN()/MAX() for the bare columns.
    part = (
        "SELECT series_id, ts, {f}({v}) FROM {t} WHERE {w} AND {v} IS NOT NULL "
        "GROUP BY series_id, {b}"
    )
    return " UNION ALL ".join(
        part.format(f=f, v=v, t=table, w=where, b=bucket) for f, v in (("MIN", low), ("MAX", high))
    )


def _fetch(
    raw,
    postgres: bool,
    ids: list[int],
    window: tuple[int, int],
    step_ms: int | None,
    source,
    limit: int | None = None,
) -> list:
    lo, hi = window
    hours = range(lo // HOUR_MS, hi // HOUR_MS + 1)
    where, params = _where(postgres, ids, hours, lo, hi)
    if step_ms:
        sql = _minmax_sql(postgres, where, step_ms, source)
        params = params * 2
    else:
        table, _, _, mean = source
        sql = f"SELECT series_id, ts, {mean} FROM {table} WHERE {where}"
        if table != "samples":
            sql += ' AND "count" > 0'
    if limit is not None:  # the database stops there: a huge answer is never fetched
        sql += " LIMIT %s" if postgres else " LIMIT ?"
        params = [*params, limit]
    cur = raw.cursor()
    try:
        cur.execute(sql, params)
        return cur.fetchall()
    finally:
        cur.close()


def _windows(conn: Connection, lo: int, hi: int) -> list[tuple[tuple[int, int], tuple]]:
    """Split [lo, hi] ms into the part served by raw samples and the older part by rollups."""
    parts = []
    bounds = time_bounds(conn=conn)
    raw_lo = round(bounds[0] * 1000) if bounds else None
    if bounds is not None and hi >= raw_lo and lo <= round(bounds[1] * 1000):
        parts.append(((max(lo, raw_lo), min(hi, round(bounds[1] * 1000))), RAW))
    if raw_lo is None or lo < raw_lo:
        first = conn.exec_driver_sql(
            "SELECT MIN(ts) FROM samples_1m WHERE hour = (SELECT MIN(hour) FROM samples_1m)"
        ).scalar()
        end = hi if raw_lo is None else min(hi, raw_lo - 1)
        if first is not None and end >= max(lo, first):
            parts.append(((max(lo, first), end), ROLLUP))
    return parts


def read_range(
    *,
    conn: Connection,
    series_ids: Iterable[int],
    start: float,
    end: float,
    step: float | None = None,
    max_points: int | None = None,
    deadline: float | None = None,
) -> dict[int, SeriesData]:
    """Return samples of the series with start <= ts <= end (unix seconds), ordered by time.

    With ``step`` (seconds), keep only each step bucket's lowest and highest sample,
    chosen by the database, so a long window stays small. Where raw samples have gone
    past retention, 1-minute rollups answer: each minute's mean (with ``step``, the
    lowest minimum and highest maximum of each bucket). With ``max_points``, raise
    TooManyPoints rather than fetch more; with ``deadline`` (``time.monotonic()``),
    raise ReadTooSlow once it passes.
    """
    ids = sorted(set(series_ids))
    lo, hi = max(math.floor(start * 1000), 0), math.ceil(end * 1000)
    if not ids or hi < lo:
        return {}
    step_ms = max(1, round(step * 1000)) if step else None
    raw = conn.connection.driver_connection
    postgres = conn.dialect.name == "postgresql"
    # With a step, a bucket's lowest and highest sample come as two rows, maybe one sample.
    budget = None if max_points is None else max_points * (2 if step_ms else 1)
    rows: list = []
    for window, source in _windows(conn, lo, hi):
        for i in range(0, len(ids), CHUNK):
            check_deadline(deadline)
            left = None if budget is None else budget - len(rows) + 1
            rows.extend(_fetch(raw, postgres, ids[i : i + CHUNK], window, step_ms, source, left))
            if budget is not None and len(rows) > budget:
                raise TooManyPoints(max_points)
    if not rows:
        return {}
    arr = np.array(rows, dtype=np.float64)  # None becomes NaN
    arr = arr[np.lexsort((arr[:, 1], arr[:, 0]))]
    if step_ms:  # a bucket's min and max may be the same sample
        keep = np.r_[True, (np.diff(arr[:, 0]) != 0) | (np.diff(arr[:, 1]) != 0)]
        arr = arr[keep]
    if max_points is not None and len(arr) > max_points:
        raise TooManyPoints(max_points)
    sid = arr[:, 0].astype(np.int64)
    cuts = np.flatnonzero(np.diff(sid)) + 1
    out: dict[int, SeriesData] = {}
    for part in np.split(np.arange(len(sid)), cuts):
        first = int(sid[part[0]])
        out[first] = SeriesData(first, arr[part, 1] / 1000.0, arr[part, 2])
    return out


def time_bounds(*, conn: Connection) -> tuple[float, float] | None:
    """Return the first and last stored sample time in unix seconds, or None when empty."""
    lo = conn.exec_driver_sql(
        "SELECT MIN(ts) FROM samples WHERE hour = (SELECT MIN(hour) FROM samples)"
    ).scalar()
    if lo is None:
        return None
    hi = conn.exec_driver_sql(
        "SELECT MAX(ts) FROM samples WHERE hour = (SELECT MAX(hour) FROM samples)"
    ).scalar()
    return lo / 1000.0, hi / 1000.0
