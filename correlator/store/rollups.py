"""The rollup job: rebuild the 1-minute rollups of each complete hour of raw samples.

A pass rolls up, newest first, at most ``max_hours`` hours that ended ``lag_seconds`` ago
and are not ROLLED (new, STALE after a late sample, or left BUILDING by a crash). Each hour
is rebuilt from its raw samples, never incremented, so replayed ingest and repeated passes
change nothing. The service runs a pass under the retention lease (``maintain_once`` in
``correlator.store.retention``); ``roll_up`` runs one on demand.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from sqlalchemy import Connection, Engine

from correlator.store.engine import write_transaction
from correlator.store.rollup_state import (
    BUILDING,
    EXPIRED,
    EXPIRED_LATE,
    HOUR_MS,
    MIN_LAG_S,
    ROLLED,
    hour_states,
)

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
DONE = (ROLLED, EXPIRED, EXPIRED_LATE)


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
    """Replace the rollups of these hours by those of their raw samples; return minutes written."""
    if not hours:
        return 0
    conn.exec_driver_sql(f"DELETE FROM samples_1m WHERE hour IN ({_list(hours)})")
    result = conn.exec_driver_sql(_SELECT.format(hours=_list(hours)) + _REPLACE)
    return max(result.rowcount, 0)


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
    """Return the hours before end_hour, from the first raw one, not rolled up; newest first."""
    first = conn.exec_driver_sql("SELECT MIN(hour) FROM samples").scalar()
    if first is None or first >= end_hour:
        return []
    states = hour_states(conn=conn, first=first, last=end_hour - 1)
    return [h for h in range(end_hour - 1, first - 1, -1) if states.get(h) not in DONE]


def roll_up(
    *,
    engine: Engine,
    now: float | None = None,
    lag_seconds: float = 300.0,
    max_hours: int = 24,
) -> RollupReport:
    """Roll up at most max_hours complete hours not rolled up yet, newest first."""
    began = time.perf_counter()
    # Never ahead of the clock: ingest marks late hours by the clock (rollup_state).
    now = time.time() if now is None else min(now, time.time())
    end_hour = (round(now * 1000) - round(max(lag_seconds, MIN_LAG_S) * 1000)) // HOUR_MS
    report = RollupReport()
    with engine.connect() as conn:
        todo = pending_hours(conn=conn, end_hour=end_hour)
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
