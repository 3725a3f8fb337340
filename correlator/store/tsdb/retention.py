"""Retention and downsampling: roll raw samples up to 1-minute rows, then drop them.

Raw here means raw and chunked (``store/tsdb/chunks.py``): both go at the same cutoff.

Raw samples are kept ``raw_days`` whole UTC days back from today (so between N and N + 1
days): every row with ``hour < raw_cutoff_hour`` is first rolled up into ``samples_1m``
(min, max, sum and count of the non-NaN values of each minute) and then removed, by
dropping whole daily partitions on PostgreSQL and by DELETE on an hour range elsewhere
(SQLite, the default partition, a day whose partition was not there). An hour the rollup
job already rolled up is kept as it is; the hour becomes EXPIRED (``rollup_state``).
Rollups older than ``rollup_days`` days are deleted the same way. The service runs the
rollup job and ``run_retention`` under the ``retention`` lease (``run_retention_job``);
``causeline db retain`` runs retention once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine

from correlator.store.engine import write_transaction
from correlator.store.lease import take_lease
from correlator.store.tsdb import chunks
from correlator.store.tsdb.compaction import compact
from correlator.store.tsdb.partitions import (
    DAY_HOURS,
    DAY_S,
    adopt_default,
    drop_partition,
    ensure_coming_days,
    is_partitioned,
    list_partitions,
)
from correlator.store.tsdb.read import first_hour
from correlator.store.tsdb.rollup_state import (
    EXPIRED,
    EXPIRED_LATE,
    ROLLED,
    hour_states,
    set_states,
)
from correlator.store.tsdb.rollups import merge_hours, rebuild_hours, roll_up

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


LEASE = "retention"
log = logging.getLogger(__name__)


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
    """Roll raw samples of hours [lo, hi) into samples_1m before they go; return minutes written.

    A ROLLED hour's rollups already hold its raw samples; an EXPIRED one's lost theirs, so
    its late samples are added; any other hour is rebuilt. Every hour becomes EXPIRED.
    """
    states = hour_states(conn=conn, first=lo, last=hi - 1)
    merged = [h for h in range(lo, hi) if states.get(h) in (EXPIRED, EXPIRED_LATE)]
    rebuilt = [h for h in range(lo, hi) if states.get(h) not in (ROLLED, EXPIRED, EXPIRED_LATE)]
    minutes = rebuild_hours(conn=conn, hours=rebuilt) + merge_hours(conn=conn, hours=merged)
    set_states(conn=conn, hours=range(lo, hi), state=EXPIRED)
    return minutes


def _count(conn: Connection, table: str, below: int) -> int:
    sql = f"SELECT COUNT(*) FROM {table} WHERE hour < {int(below)}"
    return int(conn.exec_driver_sql(sql).scalar_one())


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
    from correlator.store.tsdb.partitions import partition_name

    now = time.time() if now is None else now
    raw_cut = cutoff_hour(now=now, days=raw_days)
    report = RetentionReport(raw_cut, cutoff_hour(now=now, days=rollup_days), dry_run)
    with engine.connect() as conn:
        partitioned = is_partitioned(conn=conn)
        days = list_partitions(conn=conn)
        if dry_run:
            report.deleted_raw_rows = _count(conn, "samples", raw_cut) + chunks.sample_count(
                conn=conn, to_hour=raw_cut
            )
            report.deleted_rollup_rows = _count(conn, "samples_1m", report.rollup_cutoff_hour)
            report.dropped_partitions = [
                partition_name(d) for d in days if (d + 1) * DAY_HOURS <= raw_cut
            ]
            return report
    if partitioned:
        with write_transaction(engine) as conn:
            created = ensure_coming_days(conn=conn, now=now)
            created += adopt_default(conn=conn, from_hour=raw_cut, now=now)
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
                report.deleted_raw_rows += chunks.drop_hours(
                    conn=conn, from_hour=day * DAY_HOURS, to_hour=(day + 1) * DAY_HOURS
                )
            report.dropped_partitions.append(partition_name(day))
            if renew:
                renew()
    # What is left below the cutoff (SQLite, the default partition): a day at a time.
    while True:
        with write_transaction(engine) as conn:
            first = first_hour(conn=conn)
            if first is None or first >= raw_cut:
                break
            hi = min(raw_cut, (first // DAY_HOURS + 1) * DAY_HOURS)
            report.rolled_up_minutes += rollup_hours(conn=conn, lo=first, hi=hi)
            deleted = conn.exec_driver_sql(
                f"DELETE FROM samples WHERE hour >= {first} AND hour < {hi}"
            ).rowcount
            report.deleted_raw_rows += deleted + chunks.drop_hours(
                conn=conn, from_hour=first, to_hour=hi
            )
        if renew:
            renew()
    with write_transaction(engine) as conn:
        report.deleted_rollup_rows = conn.exec_driver_sql(
            f"DELETE FROM samples_1m WHERE hour < {report.rollup_cutoff_hour}"
        ).rowcount
        conn.exec_driver_sql(
            f"DELETE FROM samples_1m_hours WHERE hour < {report.rollup_cutoff_hour}"
        )
    return report


def _count_partition(conn: Connection, name: str) -> int:
    return int(conn.exec_driver_sql(f"SELECT COUNT(*) FROM {name}").scalar_one())


def _lease_seconds(settings: ServiceSettings) -> float:
    return max(settings.lease_seconds, 2 * _interval(settings))


def periodic(settings: ServiceSettings) -> bool:
    """Return whether passes run every rollup interval (rollups or compaction enabled)."""
    return settings.rollup_enabled or settings.compaction_enabled


def _interval(settings: ServiceSettings) -> float:
    """Return the time between passes: the rollup interval when rollups run, else retention's."""
    if periodic(settings):
        return min(settings.rollup_interval_seconds, settings.retention_interval_seconds)
    return settings.retention_interval_seconds


def maintain_once(
    *,
    engine: Engine,
    settings: ServiceSettings,
    holder: str,
    rollup: bool | None = None,
    retention: bool = True,
    now: float | None = None,
) -> dict | None:
    """Under the retention lease, roll up and compact pending hours, then run retention.

    ``rollup`` asks for the periodic part: rollups (when ``settings.rollup_enabled``; by
    default then) and compaction (when ``settings.compaction_enabled``). Return what was
    done, or None when another process holds the lease.
    """
    seconds = _lease_seconds(settings)

    def renew() -> bool:
        with write_transaction(engine) as conn:
            return take_lease(
                conn=conn, name=LEASE, holder=holder, now=time.time(), seconds=seconds
            )

    if not renew():
        return None
    done: dict = {}
    periodic_part = rollup is None or rollup
    if periodic_part and settings.rollup_enabled:
        done["rollup"] = roll_up(
            engine=engine,
            now=now,
            lag_seconds=settings.rollup_lag_seconds,
            max_hours=settings.rollup_max_hours,
        ).as_dict()
    if periodic_part and settings.compaction_enabled:
        done["compaction"] = compact(
            engine=engine,
            now=now,
            head_seconds=settings.compaction_head_seconds,
            max_hours=settings.compaction_max_hours,
        ).as_dict()
        renew()
    if retention:
        done["retention"] = run_retention(
            engine=engine,
            raw_days=settings.raw_retention_days,
            rollup_days=settings.rollup_retention_days,
            now=now,
            renew=renew,
        ).as_dict()
    return done


def retain_once(
    *, engine: Engine, settings: ServiceSettings, holder: str, now: float | None = None
) -> dict | None:
    """Run one retention pass if this process holds the retention lease; return its report."""
    done = maintain_once(engine=engine, settings=settings, holder=holder, rollup=False, now=now)
    return None if done is None else done["retention"]


async def run_retention_job(engine: Engine, *, settings: ServiceSettings, holder: str) -> None:
    """Roll up, compact and apply retention (each when enabled) under the lease until cancelled.

    Retention runs at once and every ``retention_interval_seconds``; rollups and compaction
    every ``rollup_interval_seconds``, the first pass one interval after start.
    """
    next_rollup = time.monotonic() + settings.rollup_interval_seconds
    next_retention = time.monotonic()
    while True:
        now = time.monotonic()
        rollup = periodic(settings) and now >= next_rollup
        retention = settings.retention_enabled and now >= next_retention
        if rollup or retention:
            try:
                done = await asyncio.to_thread(
                    maintain_once,
                    engine=engine,
                    settings=settings,
                    holder=holder,
                    rollup=rollup,
                    retention=retention,
                )
                if done:
                    log.info("maintenance pass: %s", done)
            except Exception:
                log.exception("maintenance pass failed")
            if rollup:
                next_rollup = time.monotonic() + settings.rollup_interval_seconds
            if retention:
                next_retention = time.monotonic() + settings.retention_interval_seconds
        wait = [next_rollup] if periodic(settings) else []
        wait += [next_retention] if settings.retention_enabled else []
        await asyncio.sleep(max(min(wait) - time.monotonic(), 0.05) if wait else 3600)
