"""The compaction job: move complete hours of raw samples into compressed chunks.

Raw samples are keyed rows (``samples``) and the head's runs (``sample_runs``) alike.

A pass compacts, oldest first, at most ``max_hours`` hours that ended ``head_seconds`` ago
(at least an hour) and still hold raw samples, late ones of a compacted hour included.
Hours go in groups (a run of hours of one day, about ``GROUP_ROWS`` samples, when catching
up), and a group in transactions of whole series of about ``SLICE_ROWS`` samples. Each
holds the chunk writers' lock alone (``chunks.lock_chunks``): its raw rows are merged into
each series' chunk, then deleted.
A series' newest chunk of the day takes the hour while it holds fewer than ``target``
samples; past that, a new chunk starts. Once all its series are done, the hour's 1-minute
rollups go (chunks answer stepped reads themselves) and it becomes COMPACTED
(``rollup_state``). Hours retention rolled up and emptied (EXPIRED) are left to retention,
which merges their late samples into the rollups.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from sqlalchemy import Connection, Engine, bindparam, text

from correlator.store.dialect import hours_where
from correlator.store.engine import write_transaction
from correlator.store.tsdb import head
from correlator.store.tsdb.chunks import (
    Chunk,
    day_start,
    delete_chunks,
    lock_chunks,
    raw_array,
    raw_hours,
    read_chunks,
    write_chunks,
)
from correlator.store.tsdb.codec import decode
from correlator.store.tsdb.partitions import DAY_HOURS, truncate_empty_days
from correlator.store.tsdb.rollup_state import (
    COMPACTED,
    EXPIRED,
    EXPIRED_LATE,
    HOUR_MS,
    hour_states,
    open_hour,
    set_states,
)
from correlator.store.tsdb.series import CHUNK

TARGET = 1024  # samples a chunk grows to before the next one starts (>= 1 hour each)
# Raw samples compacted together, about: several small hours of a day go in one group (a
# series' chunk is written once a group), and a group in transactions of whole series of
# SLICE_ROWS, so a fleet's hour (72 million samples at 20,000/s) never sits in memory at
# once, and neither SQLite's one writer nor the service's other threads (the conversion
# holds the GIL) wait long for one.
GROUP_ROWS = 500_000
SLICE_ROWS = 100_000
MIN_HEAD_S = 3600
# SQLite's busy handler retries a waiting writer (ingest) after at most as long as it has
# waited, and every 100 ms at most: a pause between compaction transactions as long as the
# last one, up to that, lets it in instead of waiting out the whole pass.
WRITER_GAP_S = 0.1

_LATEST = text(
    "SELECT c.series_id, c.hour, c.end_hour, c.ts, c.value FROM sample_chunks c JOIN "
    "(SELECT series_id, MAX(hour) AS hour FROM sample_chunks WHERE hour >= :day "
    "AND hour <= :hour AND series_id IN :ids GROUP BY series_id) m "
    "ON c.series_id = m.series_id AND c.hour = m.hour"
).bindparams(bindparam("ids", expanding=True))


@dataclass
class CompactionReport:
    """What one compaction pass did."""

    hours: list[int] = field(default_factory=list)
    samples: int = 0
    chunks: int = 0
    pending: int = 0  # hours still to compact after this pass
    seconds: float = 0.0

    def as_dict(self) -> dict:
        """Return the report as plain data."""
        return asdict(self)


def _latest(conn: Connection, ids: list[int], hour: int) -> dict[int, Chunk]:
    """Return each series' chunk starting last in the day of ``hour``, at or before it."""
    out: dict[int, Chunk] = {}
    for i in range(0, len(ids), CHUNK):
        params = {"day": day_start(hour), "hour": hour, "ids": ids[i : i + CHUNK]}
        for sid, first, last, ts_blob, value_blob in conn.execute(_LATEST, params):
            ts, values = decode(bytes(ts_blob), bytes(value_blob))
            out[sid] = Chunk(sid, first, last, ts, values)
    return out


def merge(chunk: Chunk, ts: np.ndarray, values: np.ndarray, hour: int) -> Chunk:
    """Return the chunk with these samples of ``hour`` added; the chunk's own win on a tie."""
    if ts[0] > chunk.ts[-1]:  # the usual case: the next hour, appended
        return Chunk(
            chunk.series_id,
            chunk.hour,
            max(chunk.end_hour, hour),
            np.concatenate([chunk.ts, ts]),
            np.concatenate([chunk.values, values]),
        )
    new = ~np.isin(ts, chunk.ts)
    all_ts = np.concatenate([chunk.ts, ts[new]])
    order = np.argsort(all_ts, kind="stable")
    all_values = np.concatenate([chunk.values, values[new]])
    return Chunk(
        chunk.series_id, chunk.hour, max(chunk.end_hour, hour), all_ts[order], all_values[order]
    )


def compact_hours(
    *,
    conn: Connection,
    hours: Sequence[int],
    target: int = TARGET,
    series: tuple[int, int | None] = (0, None),
) -> tuple[int, int]:
    """Move the raw samples of these hours (one day, ascending) into chunks.

    Only those of ``series`` (the first id, and the first left out); with no upper bound
    the hours are done: their rollups go and they become COMPACTED. Return (samples moved,
    chunks written). Several hours at once only where no chunk starts among them after the
    first (``_group``): each series' chunks come out as hour-by-hour passes would build
    them, encoded once instead of once an hour.
    """
    lock_chunks(conn=conn, shared=False)
    arr = _raw_and_runs(conn, hours, series)
    out: list[Chunk] = []
    if len(arr):
        sid = arr[:, 0].astype(np.int64)
        cuts = np.flatnonzero(np.diff(sid)) + 1
        latest = _latest(conn, sid[np.r_[0, cuts]].tolist(), hours[0])
        for part in np.split(np.arange(len(arr)), cuts):
            ts, values = arr[part, 1].astype(np.int64), arr[part, 2]
            out += _series_chunks(
                latest.get(int(sid[part[0]])), int(sid[part[0]]), ts, values, target
            )
        write_chunks(conn=conn, chunks=out)
    conn.exec_driver_sql(f"DELETE FROM samples WHERE {hours_where(hours, series)}")
    head.delete(conn=conn, hours=hours, series=series)
    if series[1] is None:
        # Chunks answer stepped reads faster than the rollups and hold the exact extremes.
        listed = ",".join(str(int(h)) for h in hours)
        conn.exec_driver_sql(f"DELETE FROM samples_1m WHERE hour IN ({listed})")
        set_states(conn=conn, hours=hours, state=COMPACTED)
    return len(arr), len(out)


def _raw_and_runs(conn: Connection, hours: Sequence[int], series: tuple[int, int | None]):
    """Return the (series_id, ms, value) rows of keyed samples and runs, sorted, once each."""
    arr = raw_array(conn=conn, hours=hours, series=series)
    held = head.array(conn=conn, hours=hours, series=series)
    if not len(held):
        return arr
    arr = np.concatenate([held, arr])
    arr = arr[np.lexsort((arr[:, 1], arr[:, 0]))]  # stable: a run's sample before a raw twin
    return arr[np.r_[True, (np.diff(arr[:, 0]) != 0) | (np.diff(arr[:, 1]) != 0)]]


@dataclass(slots=True)
class _Slice:
    """Where a group of hours goes on: series ids from ``first``, ``width`` of them next."""

    first: int
    width: int
    last: int  # the group's last series id when it began: past it, the rest goes at once

    def bounds(self) -> tuple[int, int | None]:
        """Return the ids of this transaction: the first, and the first left out or None."""
        stop = self.first + self.width
        return self.first, stop if stop <= self.last else None

    def after(self, moved: int, rows: int) -> _Slice:
        """Return the next slice, its width scaled (at most 4 times) toward ``rows`` samples."""
        width = max(1, min(4 * self.width, self.width * rows // max(moved, 1)))
        return _Slice(self.first + self.width, width, self.last)


def _first_slice(conn: Connection, hours: Sequence[int], rows: int) -> _Slice:
    """Return a group's first slice: from its first series, as many as its rows suggest."""
    keyed = conn.exec_driver_sql(
        f"SELECT MIN(series_id), MAX(series_id) FROM samples WHERE {hours_where(hours)}"
    ).one()
    bounds = [b for b in (*keyed, *head.series_bounds(conn=conn, hours=hours)) if b is not None]
    if not bounds:
        return _Slice(0, 1, -1)  # nothing raw: one transaction marks the hours done
    lo, hi = min(bounds), max(bounds)
    per_series = (
        conn.exec_driver_sql(
            f"SELECT COUNT(*) FROM samples WHERE {hours_where(hours, (lo, lo + 1))}"
        ).scalar_one()
        + conn.exec_driver_sql(
            "SELECT COALESCE(SUM(n_samples), 0) FROM sample_runs "
            f"WHERE {hours_where(hours, (lo, lo + 1))}"
        ).scalar_one()
    )
    return _Slice(int(lo), max(1, rows // max(per_series, 1)), int(hi))


def _series_chunks(
    chunk: Chunk | None, series_id: int, ts: np.ndarray, values: np.ndarray, target: int
) -> list[Chunk]:
    """Return the chunks to write for one series' raw samples, hour by hour."""
    out: list[Chunk] = []
    touched = False  # whether ``chunk`` changed and must be written
    hour_of = ts // HOUR_MS
    for part in np.split(np.arange(len(ts)), np.flatnonzero(np.diff(hour_of)) + 1):
        hour = int(hour_of[part[0]])
        if chunk is not None and (chunk.end_hour >= hour or len(chunk.ts) < target):
            chunk = merge(chunk, ts[part], values[part], hour)
        else:
            if chunk is not None and touched:
                out.append(chunk)
            chunk = Chunk(series_id, hour, hour, ts[part], values[part])
        touched = True
    if chunk is not None and touched:
        out.append(chunk)
    return out


def _group(conn: Connection, todo: Sequence[int], group_rows: int) -> list[int]:
    """Return the first hours of ``todo`` to compact in one transaction.

    Consecutive hours of one day, about ``group_rows`` raw samples in all (judged by the first
    hour), and only where no chunk starts among them after the first: then building them
    together gives the chunks hour-by-hour passes would.
    """
    first = todo[0]
    rows = conn.exec_driver_sql(  # counted up to group_rows: a large hour goes alone anyway
        "SELECT COUNT(*) FROM "
        f"(SELECT 1 FROM samples WHERE hour = {int(first)} LIMIT {int(group_rows)}) AS h"
    ).scalar_one() + head.sample_count(conn=conn, from_hour=first, to_hour=first + 1)
    most = max(1, group_rows // max(rows, 1))
    group = [first]
    for hour in todo[1:most]:
        if hour != group[-1] + 1 or hour // DAY_HOURS != first // DAY_HOURS:
            break
        group.append(hour)
    if len(group) > 1:
        later = conn.exec_driver_sql(
            "SELECT 1 FROM sample_chunks "
            f"WHERE hour > {int(first)} AND hour <= {int(group[-1])} LIMIT 1"
        ).first()
        if later is not None:
            return [first]
    return group


def pending_hours(*, conn: Connection, end_hour: int) -> list[int]:
    """Return the hours before end_hour that hold raw samples to compact, oldest first."""
    hours = raw_hours(conn=conn, end_hour=end_hour)
    if not hours:
        return []
    states = hour_states(conn=conn, first=hours[0], last=hours[-1])
    return [h for h in hours if states.get(h) not in (EXPIRED, EXPIRED_LATE)]


def compact(
    *,
    engine: Engine,
    now: float | None = None,
    head_seconds: float = 7200.0,
    max_hours: int = 24,
    target: int = TARGET,
    group_rows: int = GROUP_ROWS,
    slice_rows: int | None = None,
    progress: Callable[[int, int, CompactionReport], None] | None = None,
) -> CompactionReport:
    """Compact at most max_hours complete hours older than the head, oldest first.

    Hours go in groups (consecutive hours of one day holding about ``group_rows`` samples,
    or one hour), each group in transactions of whole series holding about ``slice_rows``
    (by default ``SLICE_ROWS``). Each transaction commits on its own, so a pass stopped
    half way keeps what it did and the next one goes on.
    ``progress(done, total, report)`` is called after each, with hours done and to do.
    """
    began = time.perf_counter()
    sqlite = engine.dialect.name == "sqlite"
    rows = slice_rows or SLICE_ROWS
    end_hour = open_hour(now=now, seconds=max(head_seconds, MIN_HEAD_S))
    report = CompactionReport()
    with engine.connect() as conn:
        todo = pending_hours(conn=conn, end_hour=end_hour)
    report.pending = max(len(todo) - max_hours, 0)
    batch = todo[:max_hours]
    done, group = 0, list[int]()
    at: _Slice | None = None  # where the group of hours under way goes on
    while done < len(batch):
        held = time.perf_counter()
        with write_transaction(engine) as conn:
            if at is None:
                group = _group(conn, batch[done:], group_rows)
                at = _first_slice(conn, group, rows)
            first, stop = at.bounds()
            moved, written = compact_hours(
                conn=conn, hours=group, target=target, series=(first, stop)
            )
        report.samples += moved
        report.chunks += written
        if stop is None:
            report.hours += group
            done += len(group)
            at = None
        else:
            at = at.after(moved, rows)
        if progress:
            progress(done, len(batch), report)
        if sqlite and done < len(batch):  # let a writer waiting since then in first
            time.sleep(min(WRITER_GAP_S, time.perf_counter() - held))
    with write_transaction(engine) as conn:  # PostgreSQL: emptied past days free their files
        truncate_empty_days(conn=conn, before_day=end_hour // DAY_HOURS)
    report.seconds = round(time.perf_counter() - began, 3)
    return report


def thaw(*, conn: Connection, series_id: int, from_hour: int, insert) -> int:
    """Move a series' chunked samples and runs of ``from_hour`` on back to raw; return how many.

    ``insert(rows)`` stores raw rows (``samples.insert_rows``); used where stored samples
    must change in place (OTLP delta totals), which chunks cannot.
    """
    lock_chunks(conn=conn, shared=True)
    found = read_chunks(
        conn=conn, series_ids=[series_id], first_hour=from_hour, last_hour=2**31 - 1
    )
    if not found:
        return 0
    delete_chunks(conn=conn, series_id=series_id, hours=[c.hour for c in found])
    head.delete_series(conn=conn, series_id=series_id, from_hour=from_hour)
    rows = [
        (int(ts) // HOUR_MS, series_id, int(ts), None if np.isnan(v) else float(v))
        for chunk in found
        for ts, v in zip(chunk.ts.tolist(), chunk.values.tolist(), strict=True)
    ]
    rows.sort()
    return insert(rows)
