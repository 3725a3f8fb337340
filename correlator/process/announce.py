"""Incident changes that also queue their chat messages, in one transaction."""

from __future__ import annotations

from sqlalchemy import Connection

from correlator.alerts.outbox import enqueue_incident_event
from correlator.store.incidents import get_incident, resolve_incident, set_snapshot


def _announce(conn: Connection, incident_id: int, event: str, settings, now: float) -> None:
    if settings is None:
        return
    incident = get_incident(conn=conn, incident_id=incident_id)
    if incident is not None:
        enqueue_incident_event(
            conn=conn, incident=incident, event=event, settings=settings, now=now
        )


def snapshot_and_announce(
    *, conn: Connection, incident_id: int, snapshot: dict, now: float, settings, event: str
) -> None:
    """Store a suspects snapshot and queue the opened/updated message with it."""
    set_snapshot(conn=conn, incident_id=incident_id, snapshot=snapshot, now=now)
    _announce(conn, incident_id, event, settings, now)


def resolve_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    now: float,
    by: str,
    settings,
    breach_end: float | None = None,
) -> bool:
    """Resolve an open incident and queue the resolved message; False when it was not open."""
    if not resolve_incident(
        conn=conn, incident_id=incident_id, now=now, by=by, breach_end=breach_end
    ):
        return False
    _announce(conn, incident_id, "resolved", settings, now)
    return True
