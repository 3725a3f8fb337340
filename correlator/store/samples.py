"""Bulk, idempotent sample writes and range reads, on each engine's fast path."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
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
    series_id: int, timestamps: Sequence[float], values: Sequence[float]
) -> list[tuple[int, int, float | None]]:
    """Return storable rows of one series; NaN is stored as NULL."""
    return [
        (series_id, round(t * 1000), None if v != v else v)  # noqa: PLR0124 (NaN check)
        for t, v in zip(timestamps, values, strict=True)
    ]


def insert_rows(*, conn: Connection, rows: list[tuple[int, int, float | None]]) -> int:
    """Insert sample rows sorted by key, skipping stored ones; return how many were new."""
    if not rows:
        return 0
    rows.sort()
    raw = conn.connection.driver_connection
    if conn.dialect.name == "postgresql":
        with raw.cursor() as cur:
            cur.execute(_PG_STAGING)
            with cur.copy("COPY samples_staging (series_id, ts, value) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            cur.execute(_PG_MERGE)
            inserted = cur.rowcount
            cur.execute("TRUNCATE samples_staging")
            return inserted
    cur = raw.cursor()
    try:
        cur.executemany(_SQLITE_INSERT, rows)
        return cur.rowcount
    finally:
        cur.close()


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
