"""Daily RANGE(hour) partitions of ``samples`` on PostgreSQL: create ahead, on demand, drop.

Partition ``samples_pYYYYMMDD`` holds hours [24 * day, 24 * day + 24) of that UTC day;
``samples_default`` catches rows of days without a partition. Creating a day's partition
moves that day's rows out of the default partition first, so it never fails on them.
On SQLite, and on a PostgreSQL ``samples`` that is not partitioned, every call is a no-op.
"""

from __future__ import annotations

import re
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import psycopg
from sqlalchemy import Connection, Engine

from correlator.store.engine import driver_connection

DAY_HOURS = 24
DAY_S = 86_400
DEFAULT = "samples_default"
# Days ahead of today that get partitions: the retention pass makes them, and ingest makes
# none further ahead (a row stamped later waits in the default partition until then).
DAYS_AHEAD = 3
# New partitions one batch may make, its most recent days first: a batch spanning many days
# (a backfill, a clock at zero) makes the rest in the batches after it, or retention adopts them.
NEW_PER_BATCH = 8
# pg_advisory_xact_lock key: one process at a time creates or drops partitions.
LOCK_KEY = 0x63617573
_NAME = re.compile(r"^samples_p(\d{8})$")


@dataclass
class _Seen:
    """What one engine's processes learnt: days seen with a partition, whether partitioned."""

    days: set[int] = field(default_factory=set)
    partitioned: bool | None = None


# Per engine object (dropped with it), so no database URL, password included, is a key.
_seen: weakref.WeakKeyDictionary[Engine, _Seen] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def partition_name(day: int) -> str:
    """Return the partition table name of a unix day (``hour // 24``)."""
    return f"samples_p{datetime.fromtimestamp(day * DAY_S, UTC):%Y%m%d}"


def day_of(name: str) -> int | None:
    """Return the unix day a partition name stands for, or None for other tables."""
    match = _NAME.match(name)
    if match is None:
        return None
    stamp = datetime.strptime(match.group(1), "%Y%m%d").replace(tzinfo=UTC)
    return int(stamp.timestamp()) // DAY_S


def is_partitioned(*, conn: Connection) -> bool:
    """Return whether ``samples`` is a partitioned PostgreSQL table."""
    if conn.dialect.name != "postgresql":
        return False
    kind = conn.exec_driver_sql(
        "SELECT relkind FROM pg_class WHERE oid = to_regclass('samples')"
    ).scalar()
    return kind == "p"


def list_partitions(*, conn: Connection) -> list[int]:
    """Return the unix days that have a partition, in order."""
    if not is_partitioned(conn=conn):
        return []
    names = conn.exec_driver_sql(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'samples'::regclass"
    ).scalars()
    return sorted(d for d in (day_of(n) for n in names) if d is not None)


def _create_one(conn: Connection, day: int) -> None:
    name, lo, hi = partition_name(day), day * DAY_HOURS, (day + 1) * DAY_HOURS
    stranded = conn.exec_driver_sql(
        f"SELECT 1 FROM {DEFAULT} WHERE hour >= {lo} AND hour < {hi} LIMIT 1"
    ).first()
    if stranded is None:
        conn.exec_driver_sql(
            f"CREATE TABLE {name} PARTITION OF samples FOR VALUES FROM ({lo}) TO ({hi})"
        )
        return
    # Rows of this day sit in the default partition: move them into a new table, then attach.
    conn.exec_driver_sql(f"CREATE TABLE {name} (LIKE samples INCLUDING DEFAULTS)")
    conn.exec_driver_sql(
        f"WITH moved AS (DELETE FROM {DEFAULT} WHERE hour >= {lo} AND hour < {hi} "
        f"RETURNING hour, series_id, ts, value) INSERT INTO {name} SELECT * FROM moved"
    )
    conn.exec_driver_sql(
        f"ALTER TABLE {name} ADD CONSTRAINT {name}_range CHECK (hour >= {lo} AND hour < {hi})"
    )
    conn.exec_driver_sql(
        f"ALTER TABLE samples ATTACH PARTITION {name} FOR VALUES FROM ({lo}) TO ({hi})"
    )
    conn.exec_driver_sql(f"ALTER TABLE {name} DROP CONSTRAINT {name}_range")


def create_partitions(*, conn: Connection, days: Iterable[int]) -> list[int]:
    """Create the missing partitions of these unix days in this transaction; return the new ones."""
    wanted = sorted(set(days))
    if not wanted or not is_partitioned(conn=conn):
        return []
    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")
    have = set(list_partitions(conn=conn))
    created = [d for d in wanted if d not in have]
    for day in created:
        _create_one(conn, day)
    return created


def ensure_partitions(*, conn: Connection, start: float, end: float) -> list[int]:
    """Create the partitions of every day in [start, end] (unix seconds); return the new ones."""
    return create_partitions(conn=conn, days=range(int(start // DAY_S), int(end // DAY_S) + 1))


def ensure_coming_days(*, conn: Connection, now: float, days_ahead: int = DAYS_AHEAD) -> list[int]:
    """Create the partitions of today and the next ``days_ahead`` days; return the new ones."""
    return ensure_partitions(conn=conn, start=now, end=now + days_ahead * DAY_S)


def adopt_default(*, conn: Connection, from_hour: int, now: float) -> list[int]:
    """Give the days stranded in the default partition partitions, from from_hour to DAYS_AHEAD."""
    if not is_partitioned(conn=conn):
        return []
    days = conn.exec_driver_sql(
        f"SELECT DISTINCT hour / {DAY_HOURS} FROM {DEFAULT} WHERE hour >= %(lo)s AND hour < %(hi)s",
        {"lo": from_hour, "hi": (_last_day(now) + 1) * DAY_HOURS},
    ).scalars()
    return create_partitions(conn=conn, days=list(days))


def drop_partition(*, conn: Connection, day: int) -> None:
    """Drop one day's partition with its rows."""
    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {partition_name(day)}")
    with _guard:
        for seen in _seen.values():
            seen.days.discard(day)


def _last_day(now: float) -> int:
    """Return the last unix day that gets a partition: DAYS_AHEAD after now's."""
    return int(now // DAY_S) + DAYS_AHEAD


def day_starts(hours: np.ndarray) -> np.ndarray:
    """Return where each UTC day of rows sorted by hour begins: row indices, the first 0."""
    if int(hours[0]) // DAY_HOURS == int(hours[-1]) // DAY_HOURS:  # the usual batch: one day
        return np.zeros(1, dtype=np.int64)
    return np.r_[0, np.flatnonzero(np.diff(hours // DAY_HOURS)) + 1]


def batch_days(hours: np.ndarray, *, now: float) -> set[int]:
    """Return the days of rows sorted by hour, less those after DAYS_AHEAD."""
    days = (hours[day_starts(hours)] // DAY_HOURS).tolist()
    return {d for d in days if d <= _last_day(now)}


def prepare_for_rows(*, conn: Connection, hours: np.ndarray) -> None:
    """Best effort before a COPY: give the days of incoming rows (sorted by hour) partitions.

    Of ``batch_days`` not seen yet, the NEW_PER_BATCH most recent: rows of other days go to
    the default partition, stored all the same. An engine remembers the days it saw with
    partitions, so the steady state costs no query.
    Creation waits at most half a second for the table lock inside a savepoint; when it cannot
    (another transaction holds the table), the rows go to the default partition, still stored
    exactly once, and ``adopt_default`` (the retention job) moves them later.
    """
    days = batch_days(hours, now=time.time())
    with _guard:
        seen = _seen.setdefault(conn.engine, _Seen())
        days = set(sorted(days - seen.days)[-NEW_PER_BATCH:])
        if not days:
            return
        partitioned = seen.partitioned
    if partitioned is None:
        partitioned = seen.partitioned = is_partitioned(conn=conn)
    if not partitioned:
        return
    raw = driver_connection(conn)
    with raw.cursor() as cur:
        cur.execute("SHOW lock_timeout")
        previous = cur.fetchone()[0]
        cur.execute("SAVEPOINT samples_partitions")
        try:
            cur.execute("SET LOCAL lock_timeout = '500ms'")
            create_partitions(conn=conn, days=days)
            cur.execute("RELEASE SAVEPOINT samples_partitions")
        except Exception:  # noqa: BLE001 - a lock timeout or a race: the default partition serves
            cur.execute("ROLLBACK TO SAVEPOINT samples_partitions")
            return
        finally:
            cur.execute("SELECT set_config('lock_timeout', %s, true)", (previous,))
    with _guard:
        seen.days.update(days)


def truncate_empty_days(*, conn: Connection, before_day: int) -> list[int]:
    """Give back the files of partitions before ``before_day`` that hold no rows; return them.

    Compaction empties past days by DELETE, which leaves index pages behind after VACUUM;
    TRUNCATE frees them. Only partitions with files are looked at, so a truncated one costs
    nothing on the next pass.
    """
    if not is_partitioned(conn=conn):
        return []
    names = conn.exec_driver_sql(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'samples'::regclass AND pg_relation_size(c.oid) > 0"
    ).scalars()
    days = sorted(d for d in (day_of(n) for n in names) if d is not None and d < before_day)
    return [d for d in days if _truncate_if_empty(conn, partition_name(d))]


def _truncate_if_empty(conn: Connection, name: str) -> bool:
    """Truncate a partition holding no rows, without waiting for its lock.

    A reader or a late writer there now means the next pass tries again.
    """
    raw = driver_connection(conn)
    with raw.cursor() as cur:
        cur.execute("SAVEPOINT samples_truncate")
        try:
            cur.execute(f"LOCK TABLE {name} IN ACCESS EXCLUSIVE MODE NOWAIT")
            cur.execute(f"SELECT 1 FROM {name} LIMIT 1")
            if cur.fetchone() is not None:
                cur.execute("ROLLBACK TO SAVEPOINT samples_truncate")
                return False
            cur.execute(f"TRUNCATE {name}")
            cur.execute("RELEASE SAVEPOINT samples_truncate")
            return True
        except psycopg.errors.LockNotAvailable:
            cur.execute("ROLLBACK TO SAVEPOINT samples_truncate")
            return False
