"""Escalation by itself: an open incident nobody acknowledged goes to the next on call."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from correlator.incidents.announce import Act, escalate_and_announce
from correlator.store.engine import write_transaction
from correlator.store.slas import list_slas
from correlator.store.tables import Incident

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


log = logging.getLogger(__name__)
MAX_LEVELS = 5  # escalations by itself per incident; people may escalate further by hand
AUTO = "causeline"


def policy_minutes(sla: dict | None, settings: ServiceSettings) -> float | None:
    """Return after how many unacknowledged minutes an SLA's incident escalates (None: never)."""
    own = (sla or {}).get("escalate_after_minutes")
    if isinstance(own, int | float) and own > 0:
        return float(own)
    default = getattr(settings, "escalate_after_minutes", None)
    return float(default) if default else None


def due_at(incident: Incident, minutes: float) -> float:
    """Return when an unacknowledged incident's next escalation falls due (unix seconds).

    Each level waits ``minutes`` from the last escalation (the opening, at first); a snooze
    moves it to the snooze's end at the earliest.
    """
    last = incident.escalated_at if incident.escalated_at is not None else incident.opened_at
    return max(last + minutes * 60.0, incident.snoozed_until or 0.0)


def escalate_due(
    engine: Engine,
    *,
    now: float,
    settings: ServiceSettings,
    source=None,
    slas: list[dict] | None = None,
) -> list[int]:
    """Escalate every open, unacknowledged incident past its SLA's policy; return their ids.

    Imported incidents (data from a file, not a live breach) never escalate by themselves.
    Each escalation runs in its own transaction and is checked again there, so two replicas
    racing on one incident escalate it once. ``slas``: those the caller read already.
    """
    with engine.connect() as conn:
        policy = {s["name"]: s for s in (list_slas(conn=conn) if slas is None else slas)}
        rows = Session(conn).scalars(
            select(Incident).where(Incident.status == "open", Incident.acknowledged_at.is_(None))
        )
        due = []
        for row in rows:
            minutes = policy_minutes(policy.get(row.sla), settings)
            if minutes is None or (row.snapshot or {}).get("imported"):
                continue
            if (row.escalations or 0) < MAX_LEVELS and now >= due_at(row, minutes):
                due.append((row.id, row.escalations or 0, minutes))
    done = []
    for incident_id, level, minutes in due:
        with write_transaction(engine) as conn:
            got = Session(conn).get(Incident, incident_id, with_for_update=True)
            if got is None or got.acknowledged_at is not None or got.status != "open":
                continue
            if (got.escalations or 0) != level or now < due_at(got, minutes):
                continue  # another replica escalated it first
            why = f"unacknowledged for {minutes:g} min"
            act = Act(incident_id, now, AUTO, settings, source, why)
            escalate_and_announce(conn=conn, act=act)
            done.append(incident_id)
    if done:
        log.info("escalated unacknowledged incidents %s", done)
    return done
