"""Bulk, idempotent sample writes and range reads, on each engine's fast path."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np
import psycopg
from sqlalchemy import Connection

from correlator.store.series import CHUNK

_SQLITE_INSERT = (
    "INSERT INTO samples (series_id, ts, value) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
)
_PG_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS samples_staging "
    "(series_id int4, ts int8, value float8) ON COMMIT DELETE ROWS"
)
_PG_MERGE = (
    "INSERT INTO samples (series_id, ts, value) "
    "SELECT series_id, ts, value FROM samples_staging ORDER BY series_id, ts "
    "ON CONFLICT DO NOTHING"
)


@dataclass(slots=True)
class SeriesData:
    """Samples of one stored series as numpy arrays (seconds, values with NaN)."""

    series_id: int
    ts: np.ndarray
    values: np.ndarray


def to_millis(seconds: float) -> int:
    """Return unix milliseconds for unix seconds (stored timestamps are milliseconds)."""
    return round(seconds * 1000)


def sample_rows(
    series_ids: Sequence[int],
    timestamps: Sequence[Sequence[float]],
    values: Sequence[Sequence[float]],
) -> list[tuple[int, int, float | None]]:
    """Return storable rows of several series (ids, per-series arrays); NaN becomes NULL."""
    ids = list(
        chain.from_iterable(
            repeat(sid, len(ts)) for sid, ts in zip(series_ids, timestamps, strict=True)
        )
    )
    flat_ts = np.fromiter(chain.from_iterable(timestamps), np.float64, len(ids))
    millis = np.rint(flat_ts * 1000).astype(np.int64).tolist()
    flat_values = list(chain.from_iterable(values))
    if not math.isnan(sum(flat_values)):
        return list(zip(ids, millis, flat_values, strict=True))
    return [
        (sid, t, None if math.isnan(v) else v)
        for sid, t, v in zip(ids, millis, flat_values, strict=True)
    ]


def insert_rows(*, conn: Connection, rows: list[tuple[int, int, float | None]]) -> int:
    """Insert sample rows sorted by key, skipping stored ones; return how many were new."""
    if not rows:
        return 0
    rows.sort()
    raw = conn.connection.driver_connection
    if conn.dialect.name == "postgresql":
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


def _copy_text(rows: list[tuple[int, int, float | None]]) -> str:
    values = [v for _, _, v in rows]
    try:
        plain = math.isfinite(sum(values))
    except TypeError:  # a None (NaN) among them
        plain = False
    if plain:
        return "".join([f"{s}\t{t}\t{v!r}\n" for s, t, v in rows])
    return "".join([f"{s}\t{t}\t{_pg_float(v)}\n" for s, t, v in rows])


def _copy_postgres(raw, rows: list[tuple[int, int, float | None]]) -> int:
    """COPY straight into samples; on a duplicate, COPY into staging and merge instead."""
    text = _copy_text(rows)
    with raw.cursor() as cur:
        cur.execute("SAVEPOINT samples_copy")
        try:
            with cur.copy("COPY samples (series_id, ts, value) FROM STDIN") as copy:
                copy.write(text)
            cur.execute("RELEASE SAVEPOINT samples_copy")
            return len(rows)
        except psycopg.errors.UniqueViolation:
            cur.execute("ROLLBACK TO SAVEPOINT samples_copy")
        cur.execute(_PG_STAGING)
        with cur.copy("COPY samples_staging (series_id, ts, value) FROM STDIN") as copy:
            copy.write(text)
        cur.execute(_PG_MERGE)
        inserted = cur.rowcount
        cur.execute("TRUNCATE samples_staging")
        return inserted


def read_range(
    *, conn: Connection, series_ids: Iterable[int], start: float, end: float
) -> dict[int, SeriesData]:
    """Return samples of the series with start <= ts <= end (unix seconds), ordered by time."""
    ids = sorted(set(series_ids))
    out: dict[int, SeriesData] = {}
    lo, hi = math.floor(start * 1000), math.ceil(end * 1000)
    raw = conn.connection.driver_connection
    mark = "%s" if conn.dialect.name == "postgresql" else "?"
    for i in range(0, len(ids), CHUNK):
        chunk = ids[i : i + CHUNK]
        sql = (
            f"SELECT series_id, ts, value FROM samples WHERE series_id IN "
            f"({','.join([mark] * len(chunk))}) AND ts >= {mark} AND ts <= {mark} "
            "ORDER BY series_id, ts"
        )
        cur = raw.cursor()
        try:
            cur.execute(sql, (*chunk, lo, hi))
            rows = cur.fetchall()
        finally:
            cur.close()
        if not rows:
            continue
        arr = np.array(rows, dtype=np.float64)  # None becomes NaN
        sid = arr[:, 0].astype(np.int64)
        cuts = np.flatnonzero(np.diff(sid)) + 1
        for part in np.split(np.arange(len(sid)), cuts):
            first = int(sid[part[0]])
            out[first] = SeriesData(first, arr[part, 1] / 1000.0, arr[part, 2])
    return out


def time_bounds(*, conn: Connection) -> tuple[float, float] | None:
    """Return the first and last stored sample time in unix seconds, or None when empty."""
    lo, hi = conn.exec_driver_sql("SELECT MIN(ts), MAX(ts) FROM samples").one()
    return None if lo is None else (lo / 1000.0, hi / 1000.0)
