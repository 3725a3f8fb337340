"""The sample engine's write path: bulk, idempotent writes on each engine's fast path.

Samples are keyed (hour, series_id, ts): ``hour`` is the unix hour of ``ts`` (unix
milliseconds). Fresh data of every series lands in the newest hour, so writes stay in
a small, cached part of the index. Fresh points sent several a series a batch go as runs
instead (``correlator.store.tsdb.head``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import psycopg
from sqlalchemy import Connection

from correlator.store.dialect import qmark_rows, sqlite_rows_per_statement
from correlator.store.engine import driver_connection
from correlator.store.tsdb import chunks, head
from correlator.store.tsdb.partitions import prepare_for_rows
from correlator.store.tsdb.rollup_state import HOUR_MS, late_cut, mark_late

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

    Rows a chunk or run holds count as stored (``correlator.store.tsdb.chunks``).
    Fresh rows go as runs where they may (``correlator.store.tsdb.head``; not without ``runs_ok``).
    New rows in an hour that ended a while ago mark it late (``rollup_state.mark_late``) in
    this transaction, so reads take it from raw until the rollup job rebuilds it.
    """
    if not len(cols):
        return 0
    first = head.first_of_twins(cols.hour, cols.series_id, cols.ts)  # a repeat: the first wins
    if not first.all():
        cols = cols.take(first)
    cut = late_cut()
    late = int(cols.hour[0]) < cut
    n_late = int(np.searchsorted(cols.hour, cut))  # rows sorted by hour: the late ones lead
    # The fresh rows' (hour, series) groups: the late check below drops late rows only.
    groups = head.groups(cols.hour[n_late:], cols.series_id[n_late:])
    fresh_head = head.Head(runs=False, keyed=False)  # what the fresh rows' hours hold
    if int(cols.hour[-1]) >= cut - 1:  # fresh rows, or late ones of the hour just ended
        fresh_head = head.lock_head(
            conn=conn,
            exclusive=runs_ok and bool((groups[1] >= head.RUN_MIN).any()),
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
        written, keyed = head.take_fresh(
            conn=conn,
            hour=cols.hour[fresh],
            series_id=cols.series_id[fresh],
            ts=cols.ts[fresh],
            values=cols.value[fresh],
            groups=groups,
            allow=runs_ok,
            head=fresh_head,
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
