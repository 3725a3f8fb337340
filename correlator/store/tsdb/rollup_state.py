"""Which hours ``samples_1m`` answers for: one state per unix hour, kept beside the rollups.

An hour is ROLLED when its 1-minute rollups were rebuilt from its raw samples and no raw
sample came since; a read with a step of a minute or more then serves it from the rollups.
Ingest turns a rolled hour STALE in its own transaction, so a late sample is read from raw
until the rollup job (``correlator.store.tsdb.rollups``) rebuilds the hour. EXPIRED hours lost
their raw samples to retention; EXPIRED_LATE ones got late raw samples since, read beside
the rollups until retention merges them in. COMPACTED hours live in compressed chunks
(``correlator.store.tsdb.chunks``), which answer reads themselves: their rollups are dropped,
and retention rolls them up again before their samples go.

Ingest and the job take the hour's row lock by upsert (ingest) and by a final conditional
UPDATE (the job), so an hour never ends up ROLLED without a sample committed concurrently.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection

HOUR_MS = 3_600_000
MINUTE_MS = 60_000
STALE, ROLLED, EXPIRED, EXPIRED_LATE, BUILDING, COMPACTED = 0, 1, 2, 3, 4, 5
SERVED = (ROLLED, EXPIRED, EXPIRED_LATE)  # hours whose minutes samples_1m holds
# Ingest marks hours that ended this long ago; the job rolls up only hours ended longer ago
# (at least MIN_LAG_S), so clocks of replicas may differ by the gap between the two.
INGEST_MARGIN_S = 60
MIN_LAG_S = 120


@dataclass(frozen=True, slots=True)
class Part:
    """A part of a read: a table, the hours to read (less ``skip``) and inclusive ms bounds."""

    table: str
    hours: Sequence[int]
    window: tuple[int, int]
    skip: Sequence[int] = ()


def late_cut(now: float | None = None) -> int:
    """Return the first hour that ingest leaves unmarked (it ended under INGEST_MARGIN_S ago).

    A ``now`` behind the clock counts as the clock: the job may have rolled up to it.
    """
    now_ms = round(max(time.time(), now or 0.0) * 1000)
    return (now_ms - INGEST_MARGIN_S * 1000) // HOUR_MS


def open_hour(*, now: float | None, seconds: float) -> int:
    """Return the first hour still open: it had not ended ``seconds`` before ``now``.

    A ``now`` ahead of the clock counts as the clock: ingest marks late hours by the clock.
    """
    now = time.time() if now is None else min(now, time.time())
    return (round(now * 1000) - round(seconds * 1000)) // HOUR_MS


def mark_late(*, conn: Connection, hours: Sequence[int], now: float | None = None) -> int:
    """Mark the hours (sorted) that ended INGEST_MARGIN_S ago as holding new raw samples."""
    cut = late_cut(now)
    old = [h for h in hours if h < cut]
    if not old:
        return 0
    # Ascending VALUES: every writer locks rows in one order, so writers never deadlock.
    values = ",".join(f"({int(h)}, {STALE})" for h in old)
    conn.exec_driver_sql(
        f"INSERT INTO samples_1m_hours (hour, state) VALUES {values} "
        "ON CONFLICT (hour) DO UPDATE SET state = CASE WHEN samples_1m_hours.state IN "
        f"({EXPIRED}, {EXPIRED_LATE}) THEN {EXPIRED_LATE} ELSE {STALE} END"
    )
    return len(old)


def hour_states(*, conn: Connection, first: int, last: int) -> dict[int, int]:
    """Return hour -> state of the hours in [first, last] that have one, in hour order."""
    rows = conn.exec_driver_sql(
        "SELECT hour, state FROM samples_1m_hours "
        f"WHERE hour >= {int(first)} AND hour <= {int(last)} ORDER BY hour"
    )
    return dict(rows.all())


def set_states(*, conn: Connection, hours: Iterable[int], state: int) -> None:
    """Set the state of these hours, adding rows where missing."""
    values = ",".join(f"({int(h)}, {int(state)})" for h in sorted(set(hours)))
    if values:
        conn.exec_driver_sql(
            f"INSERT INTO samples_1m_hours (hour, state) VALUES {values} "
            "ON CONFLICT (hour) DO UPDATE SET state = excluded.state"
        )


def read_parts(*, conn: Connection, lo: int, hi: int) -> list[Part]:
    """Split a stepped read of [lo, hi] ms into rolled-up minutes and raw samples.

    Hours in SERVED come from samples_1m, the rest (and late samples of EXPIRED_LATE hours)
    from raw samples. A minute only partly inside the window comes from raw where raw
    still holds it (a ROLLED edge hour), so each step bucket sees exactly the raw values.
    """
    first, last = lo // HOUR_MS, hi // HOUR_MS
    states = hour_states(conn=conn, first=first, last=last)
    rolled = [h for h, s in states.items() if s in SERVED]
    everything = range(first, last + 1)
    if not rolled:
        return [Part("samples", everything, (lo, hi))]
    skip = [h for h in rolled if states[h] != EXPIRED_LATE]
    parts = [Part("samples", everything, (lo, hi), skip)] if len(skip) < len(everything) else []
    whole_lo = -(-lo // MINUTE_MS) * MINUTE_MS  # start of the first minute wholly inside
    whole_end = (hi + 1) // MINUTE_MS * MINUTE_MS  # end of the last one
    exact_lo, exact_hi = states.get(first) == ROLLED, states.get(last) == ROLLED
    top = whole_end - MINUTE_MS if exact_hi else hi
    if whole_lo <= top:
        parts.append(Part("samples_1m", rolled, (whole_lo, top)))
    if exact_lo and lo < whole_lo:
        parts.append(Part("samples", [first], (lo, min(whole_lo - 1, hi))))
    if exact_hi and whole_end <= hi:
        parts.append(Part("samples", [last], (max(whole_end, lo), hi)))
    return parts
