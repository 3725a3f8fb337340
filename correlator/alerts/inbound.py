"""Alerts other systems fire, from Alertmanager's webhook: timeline events, incident notes."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Connection, select

from collector.schema import Event
from correlator.alerts.outbox import enqueue_incident_event
from correlator.store.events import insert_events
from correlator.store.incidents import (
    add_note,
    get_incident,
    list_incidents,
    open_incident,
    open_incident_for,
)
from correlator.store.slas import get_sla
from correlator.store.tables import Event as EventRow
from correlator.vocabulary import DEFAULT_SEVERITY

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


ZERO_TIME = "0001-01-01T00:00:00Z"


def parse_time(value: str | None) -> float | None:
    """Return unix seconds from an RFC 3339 time (None for empty or Go's zero time)."""
    if not value or value.startswith("0001-01-01"):
        return None
    value = value.replace("Z", "+00:00")
    if "." in value:  # Go writes up to 9 fraction digits; Python reads 6
        head, _, rest = value.partition(".")
        digits = "".join(c for c in rest if c.isdigit())
        value = f"{head}.{digits[:6]}{rest[len(digits) :]}"
    return datetime.fromisoformat(value).timestamp()


def alert_event(alert: dict, *, now: float) -> Event:
    """Return the timeline event of one webhook alert (firing at startsAt, resolved at endsAt)."""
    labels = {str(k): str(v) for k, v in (alert.get("labels") or {}).items()}
    notes = alert.get("annotations") or {}
    status = str(alert.get("status") or "firing")
    starts = parse_time(alert.get("startsAt")) or now
    ts = (parse_time(alert.get("endsAt")) or now) if status == "resolved" else starts
    key = alert.get("fingerprint") or ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    name = labels.get("alertname", "alert")
    text = notes.get("summary") or notes.get("description") or ""
    return Event(
        id=f"alertmanager:{key}:{status}:{round(starts)}"[:200],
        ts=ts,
        kind="alert",
        summary=f"{name} {status}" + (f": {text}" if text else ""),
        labels=labels | {"alert_status": status, "alert_source": "alertmanager"},
    )


def _open_for_model(conn: Connection, model: str) -> list[int]:
    ids = []
    for inc in list_incidents(conn=conn, status="open"):
        sla = get_sla(conn=conn, name=inc["sla"]) or {}
        if (sla.get("model") or (sla.get("labels") or {}).get("model")) == model:
            ids.append(inc["id"])
    return ids


def _announce_opened(
    conn: Connection, incident_id: int, settings: ServiceSettings | None, now: float, source
) -> None:
    incident = get_incident(conn=conn, incident_id=incident_id)
    if settings is not None and incident is not None:
        enqueue_incident_event(
            conn=conn, incident=incident, event="opened", settings=settings, now=now, source=source
        )


def take_webhook(
    *,
    conn: Connection,
    payload: dict,
    now: float,
    open_incidents: bool,
    settings: ServiceSettings | None = None,
    source=None,
) -> dict:
    """Store every alert as an event; attach new ones to open incidents of their model or SLA.

    A firing alert labelled ``causeline_sla`` opens an incident for that SLA when none is open
    and ``open_incidents`` is on; its ``opened`` message is queued in the same transaction
    (with ``settings``; ``source`` serves the SLA's current value). Alerts causeline itself
    sent (``source=causeline``) only become events.
    """
    events, attached, opened = 0, [], []
    for alert in payload.get("alerts") or []:
        event = alert_event(alert, now=now)
        if conn.scalar(select(EventRow.id).where(EventRow.id == event.id)) is not None:
            continue  # Alertmanager repeats notifications; each is told once
        insert_events(conn=conn, events=[event])
        events += 1
        labels = event.labels
        if labels.get("source") == "causeline":
            continue
        targets: list[int] = []
        sla_name = labels.get("causeline_sla")
        if sla_name:
            row = open_incident_for(conn=conn, sla=sla_name)
            if row is not None:
                targets.append(row.id)
            elif open_incidents and labels["alert_status"] == "firing":
                sla = get_sla(conn=conn, name=sla_name)
                if sla is not None:
                    new = open_incident(
                        conn=conn,
                        sla=sla_name,
                        severity=labels.get("severity") or sla.get("severity") or DEFAULT_SEVERITY,
                        breach_start=event.ts,
                        now=now,
                        by="alertmanager",
                    )
                    opened.append(new)
                    targets.append(new)
                    _announce_opened(conn, new, settings, now, source)
        if not targets and labels.get("model"):
            targets = _open_for_model(conn, labels["model"])
        for incident_id in targets:
            add_note(
                conn=conn,
                incident_id=incident_id,
                author="alertmanager",
                team="other",
                text=event.summary,
                now=now,
            )
            attached.append(incident_id)
    return {"events": events, "attached": attached, "opened": opened}
