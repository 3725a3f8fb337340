"""Incident changes that also queue their chat messages, in one transaction."""

from __future__ import annotations

from sqlalchemy import Connection

from correlator.alerts.outbox import enqueue_incident_event
from correlator.analysis.render import when
from correlator.store.incidents import (
    acknowledge_incident,
    add_note,
    get_incident,
    resolve_incident,
    set_snapshot,
)
from correlator.store.windows import MetricSource
from correlator.vocabulary import AlertEvent


def _announce(
    conn: Connection, incident_id: int, event: AlertEvent, settings, now: float, source
) -> None:
    incident = get_incident(conn=conn, incident_id=incident_id)
    if incident is not None:
        enqueue_incident_event(
            conn=conn, incident=incident, event=event, settings=settings, now=now, source=source
        )


def snapshot_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    snapshot: dict,
    now: float,
    settings,
    event: AlertEvent,
    source: MetricSource | None = None,
) -> None:
    """Store a suspects snapshot and queue the opened/updated message with it."""
    set_snapshot(conn=conn, incident_id=incident_id, snapshot=snapshot, now=now)
    _announce(conn, incident_id, event, settings, now, source)


def resolve_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    now: float,
    by: str,
    settings,
    breach_end: float | None = None,
    source: MetricSource | None = None,
    note: str | None = None,
) -> bool:
    """Resolve an open incident, queue the resolved message and write ``note`` by ``by``.

    False (and nothing written) when the incident was not open.
    """
    if not resolve_incident(
        conn=conn, incident_id=incident_id, now=now, by=by, breach_end=breach_end
    ):
        return False
    _announce(conn, incident_id, "resolved", settings, now, source)
    if note:
        add_note(conn=conn, incident_id=incident_id, author=by, team="other", text=note, now=now)
    return True


def acknowledge_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    now: float,
    by: str,
    settings,
    source: MetricSource | None = None,
    text: str | None = None,
) -> str | None:
    """Acknowledge an open incident: on it, its timeline and its chat, once.

    Returns None when done, else why not (resolved, or whom it was taken by and when).
    """
    done, had = acknowledge_incident(conn=conn, incident_id=incident_id, now=now, by=by)
    if not done:
        if had is None:
            return f"incident {incident_id} is resolved: nothing to acknowledge"
        return f"incident {incident_id} was acknowledged by {had['by']} at {when(had['at'])}"
    _announce(conn, incident_id, "acknowledged", settings, now, source)
    said = f"Acknowledged by {by}" + (f": {text}" if text else "")
    add_note(conn=conn, incident_id=incident_id, author=by, team="other", text=said, now=now)
    return None
