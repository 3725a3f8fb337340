"""Incident changes that also queue their chat messages, in one transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Connection

from correlator.alerts.outbox import enqueue_incident_event
from correlator.analysis.render import when
from correlator.store.incidents import (
    acknowledge_incident,
    add_note,
    assign_incident,
    escalate_incident,
    get_incident,
    resolve_incident,
    set_snapshot,
    snooze_incident,
)
from correlator.store.oncall import escalation_chain, list_overrides, list_rotations
from correlator.store.slas import get_sla
from correlator.store.windows import MetricSource
from correlator.vocabulary import TEAMS, AlertEvent

if TYPE_CHECKING:
    from correlator.records.incident import IncidentRecord
    from correlator.settings import ServiceSettings


def _announce(
    conn: Connection,
    incident_id: int,
    event: AlertEvent,
    settings: ServiceSettings,
    now: float,
    source,
) -> None:
    incident = get_incident(conn=conn, incident_id=incident_id)
    if incident is not None:
        enqueue_incident_event(
            conn=conn, incident=incident, event=event, settings=settings, now=now, source=source
        )


def _not_open(conn: Connection, incident_id: int) -> str:
    """Say why an action on an incident that is not open did nothing."""
    got = get_incident(conn=conn, incident_id=incident_id)
    if got is None:
        return f"incident {incident_id} does not exist"
    return f"incident {incident_id} is resolved: nothing to do"


def _note(conn: Connection, incident_id: int, by: str, said: str, text: str | None, now: float):
    """Write what was done, and why when given, on the incident's timeline."""
    said += f": {text}" if text else ""
    add_note(conn=conn, incident_id=incident_id, author=by, team="other", text=said, now=now)


def snapshot_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    snapshot: dict,
    now: float,
    settings: ServiceSettings,
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
    settings: ServiceSettings,
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


def resolve_by_hand(
    *,
    conn: Connection,
    incident_id: int,
    now: float,
    by: str,
    settings: ServiceSettings,
    source: MetricSource | None = None,
    text: str | None = None,
) -> str | None:
    """Resolve an open incident as a person does, ``text`` their note; None or why not."""
    if resolve_and_announce(
        conn=conn,
        incident_id=incident_id,
        now=now,
        by=by,
        settings=settings,
        source=source,
        note=text,
    ):
        return None
    return f"incident {incident_id} is already resolved"


def acknowledge_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    now: float,
    by: str,
    settings: ServiceSettings,
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
    _note(conn, incident_id, by, f"Acknowledged by {by}", text, now)
    return None


def assign_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    person: str,
    now: float,
    by: str,
    settings: ServiceSettings,
    source: MetricSource | None = None,
    text: str | None = None,
) -> str | None:
    """Give an open incident to ``person``, on its timeline and its chat; None or why not."""
    if not assign_incident(conn=conn, incident_id=incident_id, person=person):
        return _not_open(conn, incident_id)
    _announce(conn, incident_id, "assigned", settings, now, source)
    _note(conn, incident_id, by, f"Assigned to {person} by {by}", text, now)
    return None


def next_on_call(conn: Connection, incident: IncidentRecord, at: float) -> tuple[str, str | None]:
    """Return the team an incident escalates in and whom its next escalation reaches.

    The team owns the top suspect (else the first team with anyone on call); the person is
    that team's next contact in escalation order (``escalation_chain``), None past its end.
    """
    sla = get_sla(conn=conn, name=incident["sla"]) or {}
    model = str(sla.get("model") or (sla.get("labels") or {}).get("model") or "")
    rotations, overrides = list_rotations(conn=conn), list_overrides(conn=conn)
    chains = {t: escalation_chain(rotations, overrides, team=t, model=model, at=at) for t in TEAMS}
    top = (incident.get("suspects") or [{}])[0]
    team = top.get("owner") if top.get("owner") in TEAMS else None
    team = team or next((t for t in TEAMS if chains[t]), TEAMS[0])
    level = int(incident.get("escalations") or 0) + 1
    chain = chains[team]
    return team, (chain[level]["person"] if level < len(chain) else None)


def escalate_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    now: float,
    by: str,
    settings: ServiceSettings,
    source: MetricSource | None = None,
    text: str | None = None,
) -> str | None:
    """Escalate an open incident to the next on call, on its timeline and chat; None or why not."""
    incident = get_incident(conn=conn, incident_id=incident_id)
    if incident is None or incident["status"] != "open":
        return _not_open(conn, incident_id)
    team, to = next_on_call(conn, incident, now)
    level = escalate_incident(conn=conn, incident_id=incident_id, now=now, to=to)
    _announce(conn, incident_id, "escalated", settings, now, source)
    whom = to or f"nobody further on call in {team}"
    _note(conn, incident_id, by, f"Escalated by {by} to {whom} (level {level})", text, now)
    return None


def snooze_and_announce(
    *,
    conn: Connection,
    incident_id: int,
    minutes: float,
    now: float,
    by: str,
    settings: ServiceSettings,
    source: MetricSource | None = None,
    text: str | None = None,
) -> str | None:
    """Hold an open incident's escalation and repeats for ``minutes``; None or why not."""
    until = now + minutes * 60.0
    if not snooze_incident(conn=conn, incident_id=incident_id, until=until):
        return _not_open(conn, incident_id)
    _announce(conn, incident_id, "snoozed", settings, now, source)
    _note(conn, incident_id, by, f"Snoozed by {by} until {when(until)}", text, now)
    return None
