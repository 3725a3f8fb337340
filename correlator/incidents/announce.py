"""Incident changes that also queue their chat messages, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class Act:
    """An action on an incident (a person's, or the service's own): which, when, by whom, why."""

    incident_id: int
    now: float
    by: str
    settings: ServiceSettings
    source: MetricSource | None = None
    text: str | None = None  # why, written on the timeline with what was done

    def said(self, conn: Connection, event: AlertEvent, done: str) -> None:
        """Queue the event's message and write what was done (and why) on the timeline."""
        _announce(conn, self.incident_id, event, self.settings, self.now, self.source)
        _note(conn, self.incident_id, self.by, done, self.text, self.now)


def resolve_and_announce(*, conn: Connection, act: Act, breach_end: float | None = None) -> bool:
    """Resolve an open incident, queue the resolved message and write ``act.text`` as a note.

    False (and nothing written) when the incident was not open.
    """
    incident_id, now, by = act.incident_id, act.now, act.by
    if not resolve_incident(
        conn=conn, incident_id=incident_id, now=now, by=by, breach_end=breach_end
    ):
        return False
    _announce(conn, incident_id, "resolved", act.settings, now, act.source)
    if act.text:
        add_note(
            conn=conn, incident_id=incident_id, author=by, team="other", text=act.text, now=now
        )
    return True


def resolve_by_hand(*, conn: Connection, act: Act) -> str | None:
    """Resolve an open incident as a person does, ``act.text`` their note; None or why not."""
    if resolve_and_announce(conn=conn, act=act):
        return None
    return f"incident {act.incident_id} is already resolved"


def acknowledge_and_announce(*, conn: Connection, act: Act) -> str | None:
    """Acknowledge an open incident: on it, its timeline and its chat, once.

    Returns None when done, else why not (resolved, or whom it was taken by and when).
    """
    done, had = acknowledge_incident(conn=conn, incident_id=act.incident_id, now=act.now, by=act.by)
    if not done:
        if had is None:
            return f"incident {act.incident_id} is resolved: nothing to acknowledge"
        return f"incident {act.incident_id} was acknowledged by {had['by']} at {when(had['at'])}"
    act.said(conn, "acknowledged", f"Acknowledged by {act.by}")
    return None


def assign_and_announce(*, conn: Connection, act: Act, person: str) -> str | None:
    """Give an open incident to ``person``, on its timeline and its chat; None or why not."""
    if not assign_incident(conn=conn, incident_id=act.incident_id, person=person):
        return _not_open(conn, act.incident_id)
    act.said(conn, "assigned", f"Assigned to {person} by {act.by}")
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


def escalate_and_announce(*, conn: Connection, act: Act) -> str | None:
    """Escalate an open incident to the next on call, on its timeline and chat; None or why not."""
    incident = get_incident(conn=conn, incident_id=act.incident_id)
    if incident is None or incident["status"] != "open":
        return _not_open(conn, act.incident_id)
    team, to = next_on_call(conn, incident, act.now)
    level = escalate_incident(conn=conn, incident_id=act.incident_id, now=act.now, to=to)
    whom = to or f"nobody further on call in {team}"
    act.said(conn, "escalated", f"Escalated by {act.by} to {whom} (level {level})")
    return None


def snooze_and_announce(*, conn: Connection, act: Act, minutes: float) -> str | None:
    """Hold an open incident's escalation and repeats for ``minutes``; None or why not."""
    until = act.now + minutes * 60.0
    if not snooze_incident(conn=conn, incident_id=act.incident_id, until=until):
        return _not_open(conn, act.incident_id)
    act.said(conn, "snoozed", f"Snoozed by {act.by} until {when(until)}")
    return None
