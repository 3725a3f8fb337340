"""Compressed chunks of samples: one row per series per span of hours within a UTC day.

A chunk (``sample_chunks``) holds one series' samples of hours ``hour`` to ``end_hour``,
both in one UTC day, as two ``codec`` blobs. The compaction job
(``correlator.store.tsdb.compaction``) moves complete hours from raw ``samples`` into chunks.
A late sample for a compacted hour is stored raw like any other and merged by the next
pass; ingest drops one whose timestamp a chunk already holds, and compaction and late
ingest take turns (``lock_chunks``), so a timestamp is stored once.

The head's runs (``correlator.store.tsdb.head``) read as chunks of one hour each: reads, the
late check and ``thaw`` take both, and the counts and bounds here cover both.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection, bindparam, text

from correlator.store.dialect import hours_between, hours_where
from correlator.store.engine import driver_connection
from correlator.store.tsdb import head
from correlator.store.tsdb.codec import decode, encode
from correlator.store.tsdb.partitions import DAY_HOURS, day_starts
from correlator.store.tsdb.rollup_state import HOUR_MS
from correlator.store.tsdb.series import CHUNK

# pg_advisory_xact_lock key of chunk writers: compaction alone, late ingest shared, so a
# compaction never deletes a raw sample it did not read nor misses a chunk's new sample.
LOCK_KEY = 0x63686E6B

DAYS_PER_PROBE = 1000  # days one query asks about (a VALUES list in the SQL)
# Chunks that hold any of hours [first, last]: a chunk spans hours of one UTC day.
_HOLDS_HOURS = "hour >= :day AND hour <= :last AND end_hour >= :first"
_OVERLAPPING = text(
    "SELECT series_id, hour, end_hour, ts, value FROM sample_chunks "
    f"WHERE {_HOLDS_HOURS} AND series_id IN :ids ORDER BY series_id, hour"
).bindparams(bindparam("ids", expanding=True))
_UPSERT = text(
    "INSERT INTO sample_chunks "
    "(hour, series_id, end_hour, first_ts, last_ts, n_samples, ts, value) "
    "VALUES (:hour, :series_id, :end_hour, :first_ts, :last_ts, :n_samples, :ts, :value) "
    "ON CONFLICT (hour, series_id) DO UPDATE SET end_hour = excluded.end_hour, "
    "first_ts = excluded.first_ts, last_ts = excluded.last_ts, n_samples = excluded.n_samples, "
    "ts = excluded.ts, value = excluded.value"
)

_DELETE = text("DELETE FROM sample_chunks WHERE series_id = :sid AND hour IN :hours").bindparams(
    bindparam("hours", expanding=True)
)


@dataclass(slots=True)
class Chunk:
    """One decoded chunk: a series' samples of hours [hour, end_hour], ms timestamps."""

    series_id: int
    hour: int
    end_hour: int
    ts: np.ndarray
    values: np.ndarray


def day_start(hour: int) -> int:
    """Return the first hour of the UTC day holding ``hour``."""
    return hour // DAY_HOURS * DAY_HOURS


def lock_chunks(*, conn: Connection, shared: bool) -> None:
    """Take the chunk writers' lock for this transaction (PostgreSQL; SQLite has one writer).

    Compaction takes it alone for each transaction; late ingest and ``thaw`` share it.
    Fresh ingest, most of it, never takes it.
    """
    if conn.dialect.name == "postgresql":
        func = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        conn.exec_driver_sql(f"SELECT {func}({LOCK_KEY})")


def _hour_bounds(first_hour: int, last_hour: int) -> dict[str, int]:
    first, last = int(first_hour), int(last_hour)
    return {"day": day_start(first), "last": last, "first": first}


def read_chunks(
    *, conn: Connection, series_ids: Sequence[int], first_hour: int, last_hour: int
) -> list[Chunk]:
    """Return the decoded chunks and runs of these series that hold any of hours [first, last].

    They come by series, then time.
    """
    out = _read_chunks(conn, series_ids, first_hour, last_hour)
    found = head.read(conn=conn, series_ids=series_ids, first_hour=first_hour, last_hour=last_hour)
    if found:
        out += [Chunk(r.series_id, r.hour, r.hour, r.ts, r.values) for r in found]
        out.sort(key=lambda c: (c.series_id, c.hour, int(c.ts[0])))
    return out


def _read_chunks(
    conn: Connection, series_ids: Sequence[int], first_hour: int, last_hour: int
) -> list[Chunk]:
    """Return the decoded chunks (not runs) of these series holding any of hours [first, last]."""
    out: list[Chunk] = []
    bounds = _hour_bounds(first_hour, last_hour)
    for i in range(0, len(series_ids), CHUNK):
        ids = list(series_ids[i : i + CHUNK])
        for sid, hour, end_hour, ts_blob, value_blob in conn.execute(
            _OVERLAPPING, {**bounds, "ids": ids}
        ):
            ts, values = decode(bytes(ts_blob), bytes(value_blob))
            out.append(Chunk(sid, hour, end_hour, ts, values))
    return out


def window_array(
    *,
    conn: Connection,
    series_ids: Sequence[int],
    hours: Sequence[int],
    window: tuple[int, int],
    skip: Collection[int] = (),
) -> np.ndarray:
    """Return (series_id, ms, value) rows of chunks and runs in these hours but skip, in the window.

    Hours come sorted, often as a range, which is never listed out: a read to the year 5000
    spans 27 million hours. Rows come sorted by series and time.
    """
    if not series_ids or len(skip) >= len(hours):  # skip is a subset of hours
        return np.empty((0, 3))
    lo, hi = window
    first, last = hours[0], hours[-1]
    parts = [
        head.rows(conn=conn, series_ids=series_ids, first_hour=first, last_hour=last, window=window)
    ]
    found = _read_chunks(conn, series_ids, first, last)
    if found:
        sid = np.repeat([c.series_id for c in found], [len(c.ts) for c in found])
        ts = np.concatenate([c.ts for c in found])
        values = np.concatenate([c.values for c in found])
        parts.insert(0, np.column_stack([sid, ts, values]).astype(np.float64))
    arr = np.concatenate(parts) if len(parts) > 1 else parts[0]
    ms = arr[:, 1].astype(np.int64)
    keep = (ms >= lo) & (ms <= hi)
    if len(hours) != last - first + 1:  # hours with gaps: keep only the listed ones
        keep &= np.isin(ms // HOUR_MS, hours)
    if skip:
        keep &= ~np.isin(ms // HOUR_MS, list(skip))
    arr = arr[keep]
    # Chunks, then runs, each come by series and time, and do not overlap.
    step_sid, step_ts = np.diff(arr[:, 0]), np.diff(arr[:, 1])
    if np.all((step_sid > 0) | ((step_sid == 0) & (step_ts > 0))):
        return arr
    return arr[np.lexsort((arr[:, 1], arr[:, 0]))]


def held(
    *, conn: Connection, series_id: np.ndarray, ts: np.ndarray, hour: np.ndarray
) -> np.ndarray | None:
    """Return which rows (series id, ms, hour; sorted by hour) chunks hold; None if none.

    A UTC day at a time, as chunks lie within one, and only days some chunk starts in: rows
    days apart (a clock at zero beside yesterday's) read the chunks of their own days, never
    all those between, and a backfill into days nothing was compacted in reads no chunk.
    """
    starts = day_starts(hour)
    ends = [*starts[1:].tolist(), len(ts)]
    days = (hour[starts] // DAY_HOURS).tolist()
    chunked = _days_with_chunks(conn, days)
    mask = np.zeros(len(ts), dtype=bool)
    for day, lo, hi in zip(days, starts.tolist(), ends, strict=True):
        if day in chunked:
            rows = slice(lo, hi)
            mask[rows] = _held_in_day(
                conn, series_id[rows], ts[rows], int(hour[lo]), int(hour[hi - 1])
            )
    return mask if mask.any() else None


def _days_with_chunks(conn: Connection, days: list[int]) -> set[int]:
    """Return which of these unix days some chunk or run starts in: index probes, in SQL."""
    found: set[int] = set()
    for i in range(0, len(days), DAYS_PER_PROBE):
        values = ",".join(f"({int(d)})" for d in days[i : i + DAYS_PER_PROBE])
        found.update(
            conn.exec_driver_sql(
                f"SELECT column1 FROM (VALUES {values}) AS days WHERE EXISTS (SELECT 1 FROM "
                f"sample_chunks WHERE hour >= column1 * {DAY_HOURS} "
                f"AND hour < (column1 + 1) * {DAY_HOURS}) OR EXISTS (SELECT 1 FROM sample_runs "
                f"WHERE hour >= column1 * {DAY_HOURS} AND hour < (column1 + 1) * {DAY_HOURS})"
            ).scalars()
        )
    return found


def _held_in_day(
    conn: Connection, series_id: np.ndarray, ts: np.ndarray, first_hour: int, last_hour: int
) -> np.ndarray:
    """Return which rows of hours [first, last] of one day chunks or runs hold."""
    ids = np.unique(series_id).tolist()
    found = read_chunks(conn=conn, series_ids=ids, first_hour=first_hour, last_hour=last_hour)
    return head.held_by(series_id, ts, found)


def write_chunks(*, conn: Connection, chunks: Sequence[Chunk]) -> None:
    """Store several chunks in one statement."""
    if chunks:
        conn.execute(_UPSERT, [_params(c, *encode(c.ts, c.values)) for c in chunks])


def _params(chunk: Chunk, ts_blob: bytes, value_blob: bytes) -> dict:
    return {
        "hour": chunk.hour,
        "series_id": chunk.series_id,
        "end_hour": chunk.end_hour,
        "first_ts": int(chunk.ts[0]),
        "last_ts": int(chunk.ts[-1]),
        "n_samples": len(chunk.ts),
        "ts": ts_blob,
        "value": value_blob,
    }


def delete_chunks(*, conn: Connection, series_id: int, hours: Sequence[int]) -> None:
    """Delete chunks of a series by their first hours."""
    conn.execute(_DELETE, {"sid": series_id, "hours": list(hours)})


def first_time(*, conn: Connection) -> int | None:
    """Return the first sample time chunks or runs hold in ms, or None without either."""
    chunked = conn.exec_driver_sql(
        "SELECT MIN(first_ts) FROM sample_chunks WHERE hour = (SELECT MIN(hour) FROM sample_chunks)"
    ).scalar()
    return _least(chunked, head.first_time(conn=conn))


def _least(*values: int | None) -> int | None:
    return min((v for v in values if v is not None), default=None)


def last_time(*, conn: Connection) -> int | None:
    """Return the last chunked sample time in ms, or None without chunks (runs: head.last_time)."""
    # A chunk ends in the day it starts: the last one starts at most a day before the newest.
    return conn.exec_driver_sql(
        "SELECT MAX(last_ts) FROM sample_chunks "
        f"WHERE hour >= (SELECT MAX(hour) FROM sample_chunks) - {DAY_HOURS - 1}"
    ).scalar()


def first_hour(*, conn: Connection, at_least: int = 0) -> int | None:
    """Return the first hour a chunk starts at or a run lies in, at or after ``at_least``."""
    chunked = conn.exec_driver_sql(
        f"SELECT MIN(hour) FROM sample_chunks WHERE hour >= {int(at_least)}"
    ).scalar()
    return _least(chunked, head.first_hour(conn=conn, at_least=at_least))


def chunked_hours(*, conn: Connection, hours: Sequence[int]) -> set[int]:
    """Return which of these hours some chunk or run holds."""
    if not hours:
        return set()
    first, last = min(hours), max(hours)
    spans = conn.exec_driver_sql(
        "SELECT DISTINCT hour, end_hour FROM sample_chunks "
        f"WHERE hour >= {day_start(first)} AND hour <= {last} AND end_hour >= {first}"
    ).all()
    wanted = set(hours)
    found = head.hours_of(conn=conn, first=first, last=last) & wanted
    return found | {h for lo, hi in spans for h in range(lo, hi + 1) if h in wanted}


def sample_count(*, conn: Connection, from_hour: int = 0, to_hour: int = 2**31 - 1) -> int:
    """Return how many samples the chunks starting and runs in hours [from_hour, to_hour) hold."""
    chunked = conn.exec_driver_sql(
        "SELECT COALESCE(SUM(n_samples), 0) FROM sample_chunks "
        f"WHERE hour >= {int(from_hour)} AND hour < {int(to_hour)}"
    ).scalar_one()
    return int(chunked) + head.sample_count(conn=conn, from_hour=from_hour, to_hour=to_hour)


def drop_hours(*, conn: Connection, from_hour: int, to_hour: int) -> int:
    """Delete the chunks starting and runs in hours [from_hour, to_hour); return their samples."""
    held = sample_count(conn=conn, from_hour=from_hour, to_hour=to_hour)
    head.drop_hours(conn=conn, from_hour=from_hour, to_hour=to_hour)
    conn.exec_driver_sql(
        f"DELETE FROM sample_chunks WHERE hour >= {int(from_hour)} AND hour < {int(to_hour)}"
    )
    return held


def latest_before(
    *, conn: Connection, series_id: int, ms: int, first_hour: int
) -> tuple[int, float] | None:
    """Return a series' last chunked (ms, value) before ``ms``, looking back to first_hour."""
    row = conn.execute(
        text(
            "SELECT ts, value FROM sample_chunks WHERE series_id = :s AND hour >= :lo "
            "AND hour <= :hi AND first_ts < :ms ORDER BY hour DESC LIMIT 1"
        ),
        {"s": series_id, "lo": first_hour, "hi": ms // HOUR_MS, "ms": ms},
    ).first()
    if row is None:
        return None
    ts, values = decode(bytes(row[0]), bytes(row[1]))
    i = int(np.searchsorted(ts, ms)) - 1
    return int(ts[i]), float(values[i])


def raw_hours(*, conn: Connection, end_hour: int) -> list[int]:
    """Return the hours before end_hour holding keyed samples or runs, oldest first: seeks."""
    last = int(end_hour) - 1
    keyed = hours_between(conn, "samples", -(2**31), last)
    return sorted(set(keyed) | head.hours_of(conn=conn, first=-(2**31), last=last))


def raw_array(
    *, conn: Connection, hours: Sequence[int], series: tuple[int, int | None] = (0, None)
) -> np.ndarray:
    """Return the raw (series_id, ms, value) rows of these hours, sorted; NULL becomes NaN.

    ``series`` bounds the series ids: the first, and the first left out (None: no bound).
    """
    cur = driver_connection(conn).cursor()
    try:  # plain driver tuples: numpy reads them many times faster than Row objects
        where = hours_where(hours, series)
        cur.execute(f"SELECT series_id, ts, value FROM samples WHERE {where} ORDER BY 1, 2")
        rows = cur.fetchall()
    finally:
        cur.close()
    return np.array(rows, dtype=np.float64).reshape(-1, 3)
