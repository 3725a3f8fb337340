"""Bulk, idempotent sample writes and range reads, on each engine's fast path.

Samples are keyed (hour, series_id, ts): ``hour`` is the unix hour of ``ts`` (unix
milliseconds). Fresh data of every series lands in the newest hour, so writes stay in
a small, cached part of the index; a range read seeks each hour of the window. Fresh
points sent several a series a batch go as runs instead (``correlator.store.runs``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import psycopg
from sqlalchemy import Connection, text

from correlator.store import chunks, runs
from correlator.store.bounds import TooManyPoints, check_deadline
from correlator.store.dialect import qmark_rows, sqlite_rows_per_statement
from correlator.store.engine import driver_connection
from correlator.store.partitions import prepare_for_rows
from correlator.store.rollup_state import HOUR_MS, MINUTE_MS, Part, late_cut, mark_late, read_parts
from correlator.store.series import CHUNK

Row = tuple[int, int, int, float | None]  # (hour, series_id, ts ms, value)
Numbers = Sequence[float] | np.ndarray  # one series' timestamps (seconds) or values

_SQLITE_INSERT = "INSERT INTO samples (hour, series_id, ts, value) VALUES {} ON CONFLICT DO NOTHING"
# Rows per INSERT statement (fewer where the build allows fewer variables): each statement
# gives the GIL back while SQLite works, so few large ones let request parsing run meanwhile.
_SQLITE_ROWS = 8000
_PG_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS samples_staging "
    "(hour int4, series_id int4, ts int8, value float8) ON COMMIT DELETE ROWS"
)
_PG_MERGE = (
    "INSERT INTO samples (hour, series_id, ts, value) "
    "SELECT hour, series_id, ts, value FROM samples_staging ORDER BY hour, series_id, ts "
    "ON CONFLICT DO NOTHING"
)
# PostgreSQL binary COPY: a header, then per row a field count and (length, big-endian value)
# for each field; a NULL is length -1 with no value (the record's last 8 bytes cut off).
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_COPY_TRAILER = b"\xff\xff"
_COPY_RECORD = np.dtype(
    [
        ("fields", ">i2"),
        ("hour_len", ">i4"),
        ("hour", ">i4"),
        ("sid_len", ">i4"),
        ("sid", ">i4"),
        ("ts_len", ">i4"),
        ("ts", ">i8"),
        ("value_len", ">i4"),
        ("value", ">f8"),
    ]
)
_COPY_VALUE_AT = _COPY_RECORD.itemsize - 8


@dataclass(slots=True)
class SeriesData:
    """Samples of one stored series as numpy arrays (seconds, values with NaN)."""

    series_id: int
    ts: np.ndarray
    values: np.ndarray


@dataclass(slots=True)
class SampleColumns:
    """Rows to store as parallel numpy columns: hour, series id, ts (ms) and value (NaN: NULL)."""

    hour: np.ndarray
    series_id: np.ndarray
    ts: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return len(self.ts)

    def take(self, index: np.ndarray) -> SampleColumns:
        """Return the rows an index array or boolean mask selects, in its order."""
        return SampleColumns(
            self.hour[index], self.series_id[index], self.ts[index], self.value[index]
        )


def _sorted(cols: SampleColumns) -> SampleColumns:
    """Return the rows in key order (hour, series_id, ts); equal keys keep their order."""
    h, s, t = cols.hour, cols.series_id, cols.ts
    ordered = (h[1:] > h[:-1]) | (
        (h[1:] == h[:-1]) & ((s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (t[1:] >= t[:-1])))
    )
    return cols if ordered.all() else cols.take(np.lexsort((t, s, h)))


def _flat(arrays: Sequence[Numbers], total: int) -> np.ndarray:
    return np.fromiter(chain.from_iterable(arrays), np.float64, total)


def sample_columns(
    series_ids: Sequence[int],
    timestamps: Sequence[Numbers],
    values: Sequence[Numbers],
) -> SampleColumns:
    """Return storable rows of several series as columns, sorted by key."""
    lengths = [len(ts) for ts in timestamps]
    total = sum(lengths)
    sid = np.repeat(np.asarray(series_ids, dtype=np.int64), lengths)
    millis = np.rint(_flat(timestamps, total) * 1000).astype(np.int64)
    cols = SampleColumns(millis // HOUR_MS, sid, millis, _flat(values, total))
    return _sorted(cols)


def columns_of(rows: Sequence[Row]) -> SampleColumns:
    """Return rows (hour, series_id, ts ms, value or None) as columns, in the same order."""
    if not rows:
        empty = np.empty(0, np.int64)
        return SampleColumns(empty, empty, empty, np.empty(0, np.float64))
    hours, sids, stamps, values = zip(*rows, strict=True)
    return SampleColumns(
        np.array(hours, np.int64),
        np.array(sids, np.int64),
        np.array(stamps, np.int64),
        np.array(values, np.float64),  # None becomes NaN
    )


def _fields(cols: SampleColumns) -> tuple[np.ndarray, ...]:
    return cols.hour, cols.series_id, cols.ts, cols.value


def insert_rows(*, conn: Connection, rows: list[Row]) -> int:
    """Insert rows (as ``chunks.thaw`` or ``deltas.cumulate`` give them), skipping stored ones.

    Return how many were new.

    The rows go as they come (``insert_columns``), keyed: stored totals may change in place.
    """
    return insert_columns(conn=conn, cols=columns_of(rows), runs_ok=False)


def insert_columns(*, conn: Connection, cols: SampleColumns, runs_ok: bool = True) -> int:
    """Insert rows sorted by hour, skipping stored ones; return how many were new.

    Rows a chunk or run holds count as stored (``correlator.store.chunks``).
    Fresh rows go as runs where they may (``correlator.store.runs``; not without ``runs_ok``).
    New rows in an hour that ended a while ago mark it late (``rollup_state.mark_late``) in
    this transaction, so reads take it from raw until the rollup job rebuilds it.
    """
    if not len(cols):
        return 0
    first = runs.first_of_twins(cols.hour, cols.series_id, cols.ts)  # a repeat: the first wins
    if not first.all():
        cols = cols.take(first)
    cut = late_cut()
    late = int(cols.hour[0]) < cut
    n_late = int(np.searchsorted(cols.hour, cut))  # rows sorted by hour: the late ones lead
    # The fresh rows' (hour, series) groups: the late check below drops late rows only.
    groups = runs.groups(cols.hour[n_late:], cols.series_id[n_late:])
    head = runs.Head(runs=False, keyed=False)  # what the fresh rows' hours hold
    if int(cols.hour[-1]) >= cut - 1:  # fresh rows, or late ones of the hour just ended
        head = runs.lock_head(
            conn=conn,
            exclusive=runs_ok and bool((groups[1] >= runs.RUN_MIN).any()),
            first_hour=max(int(cols.hour[0]), cut),
            last_hour=int(cols.hour[-1]),
        )
    if late:
        # Compaction may have moved the hour into chunks: wait for it, drop what they hold.
        chunks.lock_chunks(conn=conn, shared=True)
        cols = _without_held(conn, cols, cut)
        n_late = int(np.searchsorted(cols.hour, cut))
    inserted = 0
    if n_late < len(cols):
        fresh = np.arange(n_late, len(cols))
        written, keyed = runs.take_fresh(
            conn=conn,
            hour=cols.hour[fresh],
            series_id=cols.series_id[fresh],
            ts=cols.ts[fresh],
            values=cols.value[fresh],
            groups=groups,
            allow=runs_ok,
            head=head,
        )
        inserted += written
        cols = cols.take(np.r_[np.arange(n_late), fresh[keyed]])
    if not len(cols):
        return inserted
    raw = driver_connection(conn)
    if conn.dialect.name == "postgresql":
        prepare_for_rows(conn=conn, hours=cols.hour)
        new = _copy_postgres(raw, cols)
    else:
        new = _insert_sqlite(raw, cols)
    if new and late:
        mark_late(conn=conn, hours=np.unique(cols.hour[cols.hour < cut]).tolist())
    return inserted + new


def _without_held(conn: Connection, cols: SampleColumns, cut: int) -> SampleColumns:
    """Return the rows less those of hours before cut that chunks or runs hold."""
    n = int(np.searchsorted(cols.hour, cut))
    mask = chunks.held(conn=conn, series_id=cols.series_id[:n], ts=cols.ts[:n], hour=cols.hour[:n])
    if mask is None:
        return cols
    keep = np.ones(len(cols), dtype=bool)
    keep[:n] = ~mask
    return cols.take(keep)


def _sqlite_params(cols: SampleColumns) -> list:
    """Return the rows' values flattened row by row; NaN becomes None (NULL)."""
    flat: list = [None] * (4 * len(cols))
    flat[0::4] = cols.hour.tolist()
    flat[1::4] = cols.series_id.tolist()
    flat[2::4] = cols.ts.tolist()
    flat[3::4] = cols.value.tolist()
    for i in np.flatnonzero(np.isnan(cols.value)).tolist():
        flat[4 * i + 3] = None
    return flat


def _insert_sqlite(raw, cols: SampleColumns) -> int:
    """Insert rows in order, many per statement; return how many were new.

    Full statements take ``_SQLITE_ROWS`` rows (fewer where the build binds fewer); the rest
    goes in power-of-two pieces, so a few statement texts serve every batch size.
    """
    flat = _sqlite_params(cols)
    step, n, at, inserted = sqlite_rows_per_statement(raw, 4, _SQLITE_ROWS), len(cols), 0, 0
    cur = raw.cursor()
    try:
        while at < n:
            size = step if n - at >= step else 1 << ((n - at).bit_length() - 1)
            cur.execute(_SQLITE_INSERT.format(qmark_rows(size, 4)), flat[4 * at : 4 * (at + size)])
            inserted += cur.rowcount
            at += size
    finally:
        cur.close()
    return inserted


def _copy_binary(cols: SampleColumns) -> bytes:
    """Return the rows as PostgreSQL binary COPY data; NaN becomes NULL."""
    rec = np.empty(len(cols), _COPY_RECORD)
    rec["fields"] = 4
    rec["hour_len"] = rec["sid_len"] = 4
    rec["ts_len"] = 8
    rec["hour"], rec["sid"], rec["ts"], rec["value"] = _fields(cols)
    null = np.isnan(cols.value)
    rec["value_len"] = np.where(null, -1, 8)
    body = rec.view(np.uint8).reshape(len(cols), _COPY_RECORD.itemsize)
    if null.any():
        keep = np.ones(body.shape, dtype=bool)
        keep[null, _COPY_VALUE_AT:] = False
        return _COPY_HEADER + body[keep].tobytes() + _COPY_TRAILER
    return _COPY_HEADER + body.tobytes() + _COPY_TRAILER


def _copy_postgres(raw, cols: SampleColumns) -> int:
    """COPY straight into samples; on a duplicate, COPY into staging and merge instead."""
    data = _copy_binary(cols)
    with raw.cursor() as cur:
        cur.execute("SAVEPOINT samples_copy")
        try:
            with cur.copy(
                "COPY samples (hour, series_id, ts, value) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.write(data)
            cur.execute("RELEASE SAVEPOINT samples_copy")
            return len(cols)
        except psycopg.errors.UniqueViolation:
            cur.execute("ROLLBACK TO SAVEPOINT samples_copy")
        cur.execute(_PG_STAGING)
        with cur.copy(
            "COPY samples_staging (hour, series_id, ts, value) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.write(data)
        cur.execute(_PG_MERGE)
        inserted = cur.rowcount
        cur.execute("TRUNCATE samples_staging")
        return inserted


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
        runs.last_time(conn=conn, until_ms=until),
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
