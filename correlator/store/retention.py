"""Retention and downsampling: roll raw samples up to 1-minute rows, then drop them.

Raw samples are kept ``raw_days`` whole UTC days back from today (so between N and N + 1
days): every row with ``hour < raw_cutoff_hour`` is first rolled up into ``samples_1m``
(min, max, sum and count of the non-NaN values of each minute) and then removed, by
dropping whole daily partitions on PostgreSQL and by DELETE on an hour range elsewhere
(SQLite, the default partition, a day whose partition was not there). Rollups older than
``rollup_days`` days are deleted the same way. The service runs ``run_retention`` under
the ``retention`` lease; ``causeline db retain`` runs it once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict, dataclass, field

from sqlalchemy import Connection, Engine

from correlator.store.engine import write_transaction
from correlator.store.lease import take_lease
from correlator.store.partitions import (
    DAY_HOURS,
    DAY_S,
    adopt_default,
    drop_partition,
    ensure_coming_days,
    is_partitioned,
    list_partitions,
)

LEASE = "retention"
log = logging.getLogger(__name__)

_COMBINE = {
    # An upsert merges late raw rows into a minute rolled up before.
    "postgresql": (
        'LEAST(samples_1m."min", excluded."min")',
        'GREATEST(samples_1m."max", excluded."max")',
    ),
    "sqlite": (
        'coalesce(min(samples_1m."min", excluded."min"), samples_1m."min", excluded."min")',
        'coalesce(max(samples_1m."max", excluded."max"), samples_1m."max", excluded."max")',
    ),
}


@dataclass
class RetentionReport:
    """What one retention pass did (or, in a dry run, would do)."""

    raw_cutoff_hour: int
    rollup_cutoff_hour: int
    dry_run: bool = False
    rolled_up_minutes: int = 0
    dropped_partitions: list[str] = field(default_factory=list)
    deleted_raw_rows: int = 0
    deleted_rollup_rows: int = 0
    created_partitions: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        """Return the report as plain data."""
        return asdict(self)


def cutoff_hour(*, now: float, days: int) -> int:
    """Return the first hour kept: the start of the UTC day ``days`` days before today."""
    return (int(now // DAY_S) - days) * DAY_HOURS


def rollup_hours(*, conn: Connection, lo: int, hi: int) -> int:
    """Roll raw samples of hours [lo, hi) up into samples_1m; return the minutes written."""
    low, high = _COMBINE[conn.dialect.name]
    total = 'CASE WHEN samples_1m."sum" IS NULL THEN excluded."sum" '
    total += 'WHEN excluded."sum" IS NULL THEN samples_1m."sum" '
    total += 'ELSE samples_1m."sum" + excluded."sum" END'
    result = conn.exec_driver_sql(
        'INSERT INTO samples_1m (hour, series_id, ts, "min", "max", "sum", "count") '
        "SELECT hour, series_id, (ts / 60000) * 60000, MIN(value), MAX(value), SUM(value), "
        f"COUNT(value) FROM samples WHERE hour >= {int(lo)} AND hour < {int(hi)} "
        "GROUP BY hour, series_id, ts / 60000 "
        f'ON CONFLICT (hour, series_id, ts) DO UPDATE SET "min" = {low}, "max" = {high}, '
        f'"sum" = {total}, "count" = samples_1m."count" + excluded."count"'
    )
    return max(result.rowcount, 0)


def _first_hour(conn: Connection, at_least: int = 0) -> int | None:
    return conn.exec_driver_sql(
        f"SELECT MIN(hour) FROM samples WHERE hour >= {int(at_least)}"
    ).scalar()


def _count(conn: Connection, table: str, below: int) -> int:
    return conn.exec_driver_sql(f"SELECT COUNT(*) FROM {table} WHERE hour < {int(below)}").scalar()


def run_retention(
    *,
    engine: Engine,
    raw_days: int = 7,
    rollup_days: int = 90,
    now: float | None = None,
    dry_run: bool = False,
    renew=None,
) -> RetentionReport:
    """Roll up and drop raw samples older than raw_days, rollups older than rollup_days."""
    from correlator.store.partitions import partition_name

    now = time.time() if now is None else now
    raw_cut = cutoff_hour(now=now, days=raw_days)
    report = RetentionReport(raw_cut, cutoff_hour(now=now, days=rollup_days), dry_run)
    with engine.connect() as conn:
        partitioned = is_partitioned(conn=conn)
        days = list_partitions(conn=conn)
        if dry_run:
            report.deleted_raw_rows = _count(conn, "samples", raw_cut)
            report.deleted_rollup_rows = _count(conn, "samples_1m", report.rollup_cutoff_hour)
            report.dropped_partitions = [
                partition_name(d) for d in days if (d + 1) * DAY_HOURS <= raw_cut
            ]
            return report
    if partitioned:
        with write_transaction(engine) as conn:
            created = ensure_coming_days(conn=conn, now=now)
            created += adopt_default(conn=conn, from_hour=raw_cut)
        report.created_partitions = [partition_name(d) for d in created]
        # Whole days: roll each expired partition up, then drop it, one transaction per day.
        for day in days:
            if (day + 1) * DAY_HOURS > raw_cut:
                continue
            with write_transaction(engine) as conn:
                report.rolled_up_minutes += rollup_hours(
                    conn=conn, lo=day * DAY_HOURS, hi=(day + 1) * DAY_HOURS
                )
                report.deleted_raw_rows += _count_partition(conn, partition_name(day))
                drop_partition(conn=conn, day=day)
            report.dropped_partitions.append(partition_name(day))
            if renew:
                renew()
    # What is left below the cutoff (SQLite, the default partition): a day at a time.
    while True:
        with write_transaction(engine) as conn:
            first = _first_hour(conn)
            if first is None or first >= raw_cut:
                break
            hi = min(raw_cut, (first // DAY_HOURS + 1) * DAY_HOURS)
            report.rolled_up_minutes += rollup_hours(conn=conn, lo=first, hi=hi)
            deleted = conn.exec_driver_sql(
                f"DELETE FROM samples WHERE hour >= {first} AND hour < {hi}"
            ).rowcount
            report.deleted_raw_rows += deleted
        if renew:
            renew()
    with write_transaction(engine) as conn:
        report.deleted_rollup_rows = conn.exec_driver_sql(
            f"DELETE FROM samples_1m WHERE hour < {report.rollup_cutoff_hour}"
        ).rowcount
    return report


def _count_partition(conn: Connection, name: str) -> int:
    return conn.exec_driver_sql(f"SELECT COUNT(*) FROM {name}").scalar()


def retain_once(*, engine: Engine, settings, holder: str, now: float | None = None) -> dict | None:
    """Run one retention pass if this process holds the retention lease; return its report."""
    seconds = max(settings.lease_seconds, 2 * settings.retention_interval_seconds)

    def renew() -> None:
        with write_transaction(engine) as conn:
            take_lease(conn=conn, name=LEASE, holder=holder, now=time.time(), seconds=seconds)

    with write_transaction(engine) as conn:
        held = take_lease(conn=conn, name=LEASE, holder=holder, now=time.time(), seconds=seconds)
    if not held:
        return None
    report = run_retention(
        engine=engine,
        raw_days=settings.raw_retention_days,
        rollup_days=settings.rollup_retention_days,
        now=now,
        renew=renew,
    )
    return report.as_dict()


async def run_retention_job(engine: Engine, *, settings, holder: str) -> None:
    """Run retention every ``retention_interval_seconds`` until cancelled."""
    while True:
        try:
            report = await asyncio.to_thread(
                retain_once, engine=engine, settings=settings, holder=holder
            )
            if report:
                log.info("retention pass: %s", report)
        except Exception:
            log.exception("retention pass failed")
        await asyncio.sleep(settings.retention_interval_seconds)
