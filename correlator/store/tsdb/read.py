"""The sample engine's read path: range reads over raw samples, chunks, runs and rollups.

A range read seeks each hour of the window (``hour`` is the unix hour of ``ts``, unix
milliseconds); a long one scans the hour range once. Chunks and the head's runs answer
beside raw rows; hours rolled up answer a step of a minute or more from 1-minute rollups.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain

import numpy as np
from sqlalchemy import Connection, text

from correlator.store.engine import driver_connection
from correlator.store.tsdb import chunks, head
from correlator.store.tsdb.bounds import TooManyPoints, check_deadline
from correlator.store.tsdb.rollup_state import HOUR_MS, MINUTE_MS, Part, read_parts
from correlator.store.tsdb.series import CHUNK


@dataclass(slots=True)
class SeriesData:
    """Samples of one stored series as numpy arrays (seconds, values with NaN)."""

    series_id: int
    ts: np.ndarray
    values: np.ndarray


MAX_LISTED_HOURS = 200


def _where(postgres: bool, ids: list[int], part: Part) -> tuple[str, list]:
    # A short window seeks each hour; a long one scans the hour range once (less skipped ones).
    lo, hi = part.window
    skip = set(part.skip)  # a subset of part.hours
    listed = len(part.hours) - len(skip) <= MAX_LISTED_HOURS
    hours = [h for h in part.hours if h not in skip] if listed and skip else part.hours
    if postgres:
        hour_sql = "hour = ANY(%s)" if listed else "hour BETWEEN %s AND %s"
        params: list = [list(hours)] if listed else [hours[0], hours[-1]]
        if skip and not listed:
            hour_sql += " AND hour <> ALL(%s)"
            params.append(sorted(skip))
        sql = f"{hour_sql} AND series_id = ANY(%s) AND ts >= %s AND ts <= %s"
        return sql, [*params, ids, lo, hi]
    hour_sql = f"hour IN ({','.join('?' * len(hours))})" if listed else "hour BETWEEN ? AND ?"
    params = list(hours) if listed else [hours[0], hours[-1]]
    if skip and not listed:
        hour_sql += f" AND hour NOT IN ({','.join('?' * len(skip))})"
        params.extend(sorted(skip))
    sql = f"{hour_sql} AND series_id IN ({','.join('?' * len(ids))}) AND ts >= ? AND ts <= ?"
    return sql, [*params, *ids, lo, hi]


# Where a table keeps its values: raw samples have one; 1-minute rollups a min, max and mean.
RAW = ("samples", "value", "value", "value")
ROLLUP = ("samples_1m", '"min"', '"max"', '"sum" / "count"')
SOURCES = {"samples": RAW, "samples_1m": ROLLUP}


def _minmax_sql(postgres: bool, where: str, step_ms: int, source: tuple) -> str:
    """Return a query for each step bucket's earliest lowest and highest value (NaN left out)."""
    table, low, high, _ = source
    bucket = f"ts / {int(step_ms)}"  # an int we computed, written inline so both parts match
    if postgres:
        part = (
            "(SELECT DISTINCT ON (series_id, {b}) series_id, ts, {v} FROM {t} WHERE {w} "
            "AND {v} IS NOT NULL ORDER BY series_id, {b}, {v} {o}, ts)"
        )
        return " UNION ALL ".join(
            part.format(b=bucket, v=v, t=table, w=where, o=o)
            for v, o in ((low, "ASC"), (high, "DESC"))
        )
    # SQLite returns the row holding the MIN()/MAX() for the bare columns: among equal
    # values the first it meets, the earliest in the index's (series, time) order.
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
    part: Part,
    step_ms: int | None,
    limit: int | None = None,
) -> list:
    source = SOURCES[part.table]
    where, params = _where(postgres, ids, part)
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


def _windows(conn: Connection, lo: int, hi: int) -> list[Part]:
    """Split [lo, hi] ms into the part served by raw samples and the older part by rollups."""
    parts = []
    # The first hour holding samples (a seek of each table's key), not the first sample's
    # time: that is a scan of the hour's rows on every read, 80 ms for 1.2 M samples.
    first = first_hour(conn=conn)
    raw_lo = None if first is None else first * HOUR_MS
    if raw_lo is not None and hi >= raw_lo:
        parts.append(_part("samples", max(lo, raw_lo), hi))
    if raw_lo is None or lo < raw_lo:
        first = conn.exec_driver_sql(
            "SELECT MIN(ts) FROM samples_1m WHERE hour = (SELECT MIN(hour) FROM samples_1m)"
        ).scalar()
        # Whole hours before the first raw one: recent hours have rollups beside raw samples.
        end = hi if raw_lo is None else min(hi, raw_lo // HOUR_MS * HOUR_MS - 1)
        if first is not None and end >= max(lo, first):
            parts.append(_part("samples_1m", max(lo, first), end))
    return parts


def _part(table: str, lo: int, hi: int) -> Part:
    return Part(table, range(lo // HOUR_MS, hi // HOUR_MS + 1), (lo, hi))


def _extremes(arr: np.ndarray, step_ms: int) -> np.ndarray:
    """Keep the first lowest and first highest row of each (series, step bucket), as the SQL.

    Rows come sorted by series and time; rows of two sources may share a bucket. A minute's
    rollup gives its lowest and highest one timestamp: the highest then goes 1 ms later, so
    timestamps stay unique.
    """
    bucket = arr[:, 1] // step_ms
    new = np.r_[True, (np.diff(arr[:, 0]) != 0) | (np.diff(bucket) != 0)]
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    values = arr[:, 2]
    low = np.flatnonzero(values == np.minimum.reduceat(values, starts)[group])
    high = np.flatnonzero(values == np.maximum.reduceat(values, starts)[group])
    low = low[np.r_[True, np.diff(group[low]) != 0]]  # the first lowest row of each group
    high = high[np.r_[True, np.diff(group[high]) != 0]]  # and the first highest
    keep = np.zeros(len(arr), dtype=bool)
    keep[low] = keep[high] = True
    out = arr[keep]
    same = np.r_[False, (np.diff(out[:, 0]) == 0) & (np.diff(out[:, 1]) == 0)]
    out[same & np.r_[False, out[1:, 2] != out[:-1, 2]], 1] += 1  # equal ones: one is dropped
    return out


def _chunk_rows(conn: Connection, ids: list[int], part: Part, step_ms: int | None) -> np.ndarray:
    """Return chunked samples of a raw part as ``_fetch`` would."""
    arr = chunks.window_array(
        conn=conn, series_ids=ids, hours=part.hours, window=part.window, skip=part.skip
    )
    if step_ms:  # like the database: NaN left out, each bucket's lowest and highest
        arr = arr[~np.isnan(arr[:, 2])]
        if len(arr):
            arr = _extremes(arr, step_ms)
    return arr


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

    With ``step`` (seconds), keep only each step bucket's first lowest and first highest
    sample, chosen by the database, so a long window stays small; a flat bucket gives one.
    With a step of a minute or more, hours rolled up (``rollup_state``) come from 1-minute
    rollups: a bucket keeps the lowest minimum and highest maximum, at their minute's start.
    Where raw samples have gone past retention, rollups answer a read without a step too:
    each minute's mean. With ``max_points``, raise TooManyPoints rather than fetch more;
    with ``deadline`` (``time.monotonic()``), raise ReadTooSlow once it passes.
    """
    ids = sorted(set(series_ids))
    lo, hi = max(math.floor(start * 1000), 0), math.ceil(end * 1000)
    if not ids or hi < lo:
        return {}
    step_ms = max(1, round(step * 1000)) if step else None
    raw = driver_connection(conn)
    postgres = conn.dialect.name == "postgresql"
    minutes = step_ms is not None and step_ms >= MINUTE_MS
    parts = read_parts(conn=conn, lo=lo, hi=hi) if minutes else _windows(conn, lo, hi)
    # With a step, a bucket's lowest and highest sample come as two rows, maybe one sample.
    budget = None if max_points is None else max_points * (2 if step_ms else 1)
    rows: list = []
    chunked: list[np.ndarray] = []  # first: a chunk's sample wins over a raw twin
    for part in parts:
        if part.table == "samples":
            check_deadline(deadline)
            left = None if budget is None else budget - len(rows)
            found = _chunk_rows(conn, ids, part, step_ms)
            if max_points is not None and left is not None and len(found) > left:
                raise TooManyPoints(max_points)
            if len(found):
                chunked.append(found)
                budget = None if budget is None else budget - len(found)
        for i in range(0, len(ids), CHUNK):
            check_deadline(deadline)
            left = None if budget is None else budget - len(rows) + 1
            rows.extend(_fetch(raw, postgres, ids[i : i + CHUNK], part, step_ms, left))
            if max_points is not None and budget is not None and len(rows) > budget:
                raise TooManyPoints(max_points)
    if not rows and not chunked:
        return {}
    if step_ms:  # no NULL values: the fast path
        arr = np.fromiter(chain.from_iterable(rows), np.float64, 3 * len(rows)).reshape(-1, 3)
    else:
        arr = np.array(rows, dtype=np.float64).reshape(-1, 3)  # None becomes NaN
    # Chunks alone (a window wholly compacted) come sorted and, with a step, reduced.
    merge = len(chunked) > 1 or (chunked and len(rows) > 0)
    if chunked:
        arr = np.concatenate([*chunked, arr])
    if not chunked or merge:
        arr = arr[np.lexsort((arr[:, 1], arr[:, 0]))]  # stable: chunk rows first among twins
    if merge and not step_ms:
        twin = np.r_[False, (np.diff(arr[:, 0]) == 0) & (np.diff(arr[:, 1]) == 0)]
        arr = arr[~twin]
    if step_ms and (minutes or merge):
        arr = _extremes(arr, step_ms)
    if step_ms:  # a flat bucket gives one point, however the engine broke the tie
        bucket = arr[:, 1] // step_ms
        same = (np.diff(arr[:, 0]) == 0) & (np.diff(bucket) == 0)
        moved = (np.diff(arr[:, 1]) != 0) & (arr[1:, 2] != arr[:-1, 2])  # not diff: inf - inf
        keep = np.r_[True, ~same | moved]
        arr = arr[keep]
    if max_points is not None and len(arr) > max_points:
        raise TooManyPoints(max_points)
    sid = arr[:, 0].astype(np.int64)
    cuts = np.flatnonzero(np.diff(sid)) + 1
    out: dict[int, SeriesData] = {}
    for rows_of in np.split(np.arange(len(sid)), cuts):  # one series' rows each
        first = int(sid[rows_of[0]])
        out[first] = SeriesData(first, arr[rows_of, 1] / 1000.0, arr[rows_of, 2])
    return out


def _least(*values: int | None) -> int | None:
    return min((v for v in values if v is not None), default=None)


def first_time(*, conn: Connection) -> int | None:
    """Return the first stored sample time (raw or chunked) in unix ms, or None when empty."""
    raw = conn.exec_driver_sql(
        "SELECT MIN(ts) FROM samples WHERE hour = (SELECT MIN(hour) FROM samples)"
    ).scalar()
    return _least(raw, chunks.first_time(conn=conn))


def first_hour(*, conn: Connection, at_least: int = 0) -> int | None:
    """Return the first hour at or after ``at_least`` holding raw or chunked samples."""
    raw = conn.exec_driver_sql(
        f"SELECT MIN(hour) FROM samples WHERE hour >= {int(at_least)}"
    ).scalar()
    return _least(raw, chunks.first_hour(conn=conn, at_least=at_least))


def time_bounds(*, conn: Connection, not_after: float | None = None) -> tuple[float, float] | None:
    """Return the first and last stored sample time (raw or chunked), unix seconds, or None.

    With ``not_after``, raw samples and runs stamped later are left out (a clock set wrong):
    chunks hold only hours the compaction head has passed.
    """
    lo = first_time(conn=conn)
    if lo is None:
        return None
    until = None if not_after is None else math.floor(not_after * 1000)
    found = (
        _last_raw(conn, until),
        chunks.last_time(conn=conn),
        head.last_time(conn=conn, until_ms=until),
    )
    hi = max((v for v in found if v is not None), default=None)
    return None if hi is None else (lo / 1000.0, hi / 1000.0)


_LAST_UNTIL = text(
    "SELECT MAX(ts) FROM samples WHERE ts <= :ms "
    "AND hour = (SELECT MAX(hour) FROM samples WHERE hour <= :top)"
)


def _last_raw(conn: Connection, until_ms: int | None) -> int | None:
    """Return the last raw sample time in ms, at or before until_ms when given."""
    if until_ms is None:
        return conn.exec_driver_sql(
            "SELECT MAX(ts) FROM samples WHERE hour = (SELECT MAX(hour) FROM samples)"
        ).scalar()
    hour = until_ms // HOUR_MS
    for top in (hour, hour - 1):  # the hour of until_ms may hold only later samples
        last = conn.execute(_LAST_UNTIL, {"ms": until_ms, "top": top}).scalar()
        if last is not None:
            return last
    return None
