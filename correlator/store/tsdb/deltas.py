"""Turn increments (OTLP delta points) into running totals on top of what the store holds.

A delta point at time t is stored as the series' total at t: the stored value of the latest
point before t (looked for up to ``LOOKBACK_HOURS`` back; none found means 0) plus the new
increments up to t. A point whose (series, t) is already stored is a resent one and adds
nothing, so retries never double-count. A point older than stored ones (exports that arrive
out of order) also raises the stored totals after it, up to ``LOOKBACK_HOURS`` later. On
PostgreSQL the series rows are locked for the transaction, so concurrent writers of one
series take turns. Where the points fall in compacted hours, the series' chunks from there
on go back to raw first (``compaction.thaw``), since stored totals may change.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from sqlalchemy import Connection, bindparam, text

from collector.schema import SeriesBatch
from correlator.store.tsdb.chunks import latest_before
from correlator.store.tsdb.compaction import thaw
from correlator.store.tsdb.rollup_state import HOUR_MS, late_cut, mark_late
from correlator.store.tsdb.write import Row, insert_rows

# How far back a total is looked for (the raw retention default: older ones have left the raw
# table), and how far after a late point stored totals are raised.
LOOKBACK_HOURS = 24 * 7

_LOCK = text("SELECT id FROM series WHERE id IN :ids ORDER BY id FOR UPDATE").bindparams(
    bindparam("ids", expanding=True)
)
_PRESENT = text(
    "SELECT ts FROM samples WHERE hour IN :hours AND series_id = :sid AND ts IN :stamps"
).bindparams(bindparam("hours", expanding=True), bindparam("stamps", expanding=True))
_BEFORE = text(
    "SELECT ts, value FROM samples WHERE hour IN :hours AND series_id = :sid AND ts < :ts "
    "ORDER BY hour DESC, ts DESC LIMIT 1"
).bindparams(bindparam("hours", expanding=True))
_AFTER = text(
    "SELECT hour, ts, value FROM samples WHERE hour IN :hours AND series_id = :sid AND ts > :ts "
    "ORDER BY hour, ts"
).bindparams(bindparam("hours", expanding=True))
_FIX = text(
    "UPDATE samples SET value = :value WHERE hour = :hour AND series_id = :sid AND ts = :ts"
)


class DeltaOverflow(ValueError):
    """A delta point that would take a stored running total past float64's range."""

    def __init__(self, index: int, ms: int, series: SeriesBatch):
        self.index, self.ts = index, ms / 1000
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(series.labels.items()))
        super().__init__(
            f"the point at {ms * 1_000_000} (timeUnixNano) would take the running total of "
            f"{series.name}{{{labels}}} past float64's range (about 1.8e308)"
        )


def _finite(value: float, index: int, ms: int, series: SeriesBatch) -> float:
    """Return ``value``; DeltaOverflow (the point at ``ms`` is to blame) when it is not finite."""
    if not math.isfinite(value):
        raise DeltaOverflow(index, ms, series)
    return value


def _points(series: SeriesBatch) -> dict[int, float]:
    """Return ms -> increment, the first of any repeated timestamp."""
    out: dict[int, float] = {}
    for t, v in zip(series.timestamps, series.values, strict=True):
        out.setdefault(round(t * 1000), float(v))
    return out


def _new_points(conn: Connection, sid: int, points: dict[int, float]) -> list[tuple[int, float]]:
    """Return the (ms, increment) pairs not stored yet, in time order."""
    stamps = sorted(points)
    present: set[int] = set()
    for i in range(0, len(stamps), 500):
        chunk = stamps[i : i + 500]
        hours = sorted({ms // HOUR_MS for ms in chunk})
        found = conn.execute(_PRESENT, {"hours": hours, "sid": sid, "stamps": chunk})
        present.update(r[0] for r in found)
    return [(ms, points[ms]) for ms in stamps if ms not in present]


def _total(value: float | None) -> float:
    return 0.0 if value is None or math.isnan(value) else value


def _level_before(conn: Connection, sid: int, ms: int) -> float:
    """Return the series' stored total just before ``ms``, raw or chunked (0 when none)."""
    hour = ms // HOUR_MS
    back = list(range(hour, hour - LOOKBACK_HOURS - 1, -1))
    raw = conn.execute(_BEFORE, {"hours": back, "sid": sid, "ts": ms}).first()
    held = latest_before(conn=conn, series_id=sid, ms=ms, first_hour=hour - LOOKBACK_HOURS)
    if held is not None and (raw is None or held[0] > raw[0]):
        return _total(held[1])
    return _total(None if raw is None else raw[1])


def cumulate(
    *, conn: Connection, ids: Sequence[int], series: Sequence[SeriesBatch], now: float | None = None
) -> list[Row]:
    """Return the rows to insert for delta series (ids parallel); raise totals stored after.

    DeltaOverflow (nothing should be stored then) when a total would not be finite.
    """
    if conn.dialect.name == "postgresql" and ids:
        conn.execute(_LOCK, {"ids": sorted(set(ids))})
    rows: list[Row] = []
    fixes: list[dict] = []
    top = int((time.time() if now is None else now) * 1000) // HOUR_MS + 1
    cut = late_cut(now)
    for index, (sid, s) in enumerate(zip(ids, series, strict=True)):
        points = _points(s)
        if points and min(points) // HOUR_MS < cut:  # stored totals there may be chunked
            thaw(
                conn=conn,
                series_id=sid,
                from_hour=min(points) // HOUR_MS,
                insert=lambda moved: insert_rows(conn=conn, rows=moved),
            )
        new = _new_points(conn, sid, points)
        if not new:
            continue
        first = new[0][0]
        hour = first // HOUR_MS
        level = _level_before(conn, sid, first)
        ahead = list(range(hour, min(max(top, new[-1][0] // HOUR_MS), hour + LOOKBACK_HOURS) + 1))
        later = conn.execute(_AFTER, {"hours": ahead, "sid": sid, "ts": first}).all()
        added, i, last = 0.0, 0, first
        for ms, inc in new:
            while i < len(later) and later[i][1] < ms:
                hour_i, ts_i, stored = later[i]
                level = _total(stored)  # the stored total, before this request raises it
                value = _finite(level + added, index, last, s)
                fixes.append({"value": value, "hour": hour_i, "sid": sid, "ts": ts_i})
                i += 1
            added += inc
            last = ms
            rows.append((ms // HOUR_MS, sid, ms, _finite(level + added, index, ms, s)))
        fixes += [
            {"value": _finite(_total(v) + added, index, last, s), "hour": h, "sid": sid, "ts": ts}
            for h, ts, v in later[i:]
        ]
    if fixes:
        conn.execute(_FIX, fixes)
        mark_late(conn=conn, hours=sorted({f["hour"] for f in fixes}), now=now)
    rows.sort()
    return rows
