"""Repository functions for incidents and their notes."""

from __future__ import annotations

from sqlalchemy import Connection, case, select
from sqlalchemy.orm import Session

from correlator.records.incident import IncidentRecord, IncidentSummaryRecord, NoteRecord
from correlator.store.tables import Incident, IncidentNote


def note_dict(row: IncidentNote) -> NoteRecord:
    """Return the API form of a note."""
    return {
        "id": row.id,
        "ts": row.ts,
        "author": row.author,
        "team": row.team,
        "text": row.text,
    }


def _summary(row: Incident) -> IncidentSummaryRecord:
    suspects = (row.snapshot or {}).get("suspects") or []
    return {
        "id": row.id,
        "sla": row.sla,
        "status": row.status,
        "severity": row.severity,
        "breach_start": row.breach_start,
        "breach_end": row.breach_end,
        "opened_at": row.opened_at,
        "acknowledged_at": row.acknowledged_at,
        "acknowledged_by": row.acknowledged_by,
        "assignee": row.assignee,
        "escalations": row.escalations or 0,
        "escalated_at": row.escalated_at,
        "snoozed_until": row.snoozed_until,
        "resolved_at": row.resolved_at,
        "top_suspect": suspects[0] if suspects else None,
    }


def incident_dict(row: Incident, notes: list[IncidentNote]) -> IncidentRecord:
    """Return the full API form of an incident."""
    snap = row.snapshot or {}
    return IncidentRecord(
        **_summary(row),
        resolved_by=row.resolved_by,
        opened_by=row.opened_by,
        reranked_at=row.reranked_at,
        headline=snap.get("headline"),
        scope=snap.get("scope"),
        confidence=snap.get("confidence"),
        confidence_says=snap.get("confidence_says"),
        suspects=snap.get("suspects") or [],
        changes=snap.get("changes") or [],
        chain=snap.get("chain") or [],
        oncall=snap.get("oncall") or {"algo": None, "infra": None},
        analysis_error=snap.get("analysis_error"),
        runbook=snap.get("runbook"),
        imported=snap.get("imported"),
        notes=[note_dict(n) for n in notes],
    )


def open_incident_for(*, conn: Connection, sla: str) -> Incident | None:
    """Return the open incident of an SLA, or None."""
    return Session(conn).scalars(select(Incident).where(Incident.open_slot == sla)).first()


def open_incident(
    *, conn: Connection, sla: str, severity: str, breach_start: float, now: float, by: str
) -> int:
    """Open an incident for an SLA (the caller checked none is open); return its id."""
    session = Session(conn)
    row = Incident(
        sla=sla,
        open_slot=sla,
        status="open",
        severity=severity,
        breach_start=breach_start,
        opened_at=now,
        opened_by=by,
        snapshot={},
    )
    session.add(row)
    session.flush()
    return row.id


def set_snapshot(*, conn: Connection, incident_id: int, snapshot: dict, now: float) -> None:
    """Replace the suspects snapshot of an incident."""
    session = Session(conn)
    row = session.get_one(Incident, incident_id)
    row.snapshot = snapshot
    row.reranked_at = now
    session.flush()


def resolve_incident(
    *, conn: Connection, incident_id: int, now: float, by: str, breach_end: float | None = None
) -> bool:
    """Resolve an open incident; return False when it was not open."""
    session = Session(conn)
    row = session.get(Incident, incident_id)
    if row is None or row.status != "open":
        return False
    row.status, row.open_slot = "resolved", None
    row.resolved_at, row.resolved_by = now, by
    row.breach_end = breach_end if breach_end is not None else row.breach_end
    session.flush()
    return True


def acknowledge_incident(
    *, conn: Connection, incident_id: int, now: float, by: str
) -> tuple[bool, dict | None]:
    """Mark an open incident acknowledged by ``by``; return (done, who had, when it had)."""
    session = Session(conn)
    row = session.get(Incident, incident_id)
    if row is None or row.status != "open":
        return False, None
    if row.acknowledged_at is not None:
        return False, {"by": row.acknowledged_by, "at": row.acknowledged_at}
    row.acknowledged_at, row.acknowledged_by = now, by
    row.assignee = by
    session.flush()
    return True, None


def _change_open(conn: Connection, incident_id: int, **values) -> Incident | None:
    """Set columns of an open incident; return its row, None when it is not open."""
    session = Session(conn)
    row = session.get(Incident, incident_id)
    if row is None or row.status != "open":
        return None
    for name, value in values.items():
        setattr(row, name, value)
    session.flush()
    return row


def assign_incident(*, conn: Connection, incident_id: int, person: str) -> bool:
    """Give an open incident to ``person``; False when it is not open."""
    return _change_open(conn, incident_id, assignee=person) is not None


def escalate_incident(
    *, conn: Connection, incident_id: int, now: float, to: str | None
) -> int | None:
    """Count one more escalation of an open incident, to ``to``; return its level or None."""
    session = Session(conn)
    row = session.get(Incident, incident_id)
    if row is None or row.status != "open":
        return None
    row.escalations = (row.escalations or 0) + 1
    row.escalated_at = now
    row.assignee = to  # None: nobody further on call, which the message says
    session.flush()
    return row.escalations


def snooze_incident(*, conn: Connection, incident_id: int, until: float) -> bool:
    """Hold an open incident's escalation and messages until ``until``; False if not open."""
    return _change_open(conn, incident_id, snoozed_until=until) is not None


def get_incident(*, conn: Connection, incident_id: int) -> IncidentRecord | None:
    """Return one incident with its notes, or None."""
    session = Session(conn)
    row = session.get(Incident, incident_id)
    if row is None:
        return None
    notes = session.scalars(
        select(IncidentNote)
        .where(IncidentNote.incident_id == incident_id)
        .order_by(IncidentNote.ts, IncidentNote.id)
    )
    return incident_dict(row, list(notes))


def list_incidents(*, conn: Connection, status: str | None = None) -> list[IncidentSummaryRecord]:
    """Return incident summaries, open first, newest first."""
    stmt = select(Incident).order_by(
        case((Incident.status == "open", 0), else_=1), Incident.opened_at.desc(), Incident.id.desc()
    )
    if status:
        stmt = stmt.where(Incident.status == status)
    return [_summary(r) for r in Session(conn).scalars(stmt)]


def add_note(
    *, conn: Connection, incident_id: int, author: str, team: str, text: str, now: float
) -> NoteRecord | None:
    """Add a note to an incident; return it, or None when the incident is unknown."""
    session = Session(conn)
    if session.get(Incident, incident_id) is None:
        return None
    row = IncidentNote(incident_id=incident_id, ts=now, author=author, team=team, text=text)
    session.add(row)
    session.flush()
    return note_dict(row)
