"""The alert outbox: rows written with the incident change, listed and retried by the API."""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import Connection, select, update
from sqlalchemy.orm import Session

from correlator.alerts.actions import action_links, secret_text
from correlator.alerts.formats import FollowingFormat, alert_format
from correlator.alerts.masking import scrub
from correlator.alerts.messages import build_message, suspect_key
from correlator.alerts.routing import load_config
from correlator.alerts.silences import silenced_until
from correlator.analysis.breach import aggregate
from correlator.promsource.reader import PromSourceError
from correlator.store.dialect import upsert_insert
from correlator.store.slas import get_sla
from correlator.store.tables import AlertOutbox
from correlator.store.windows import MetricSource, sla_series
from correlator.vocabulary import DEFAULT_AGGREGATE, AlertEvent

if TYPE_CHECKING:
    from correlator.records.incident import IncidentRecord
    from correlator.settings import ServiceSettings


log = logging.getLogger(__name__)
STATUSES = ("pending", "sending", "sent", "failed", "silenced", "stale")


def current_value(
    *, conn: Connection, sla: dict | None, now: float, source: MetricSource | None = None
) -> float | None:
    """Return the SLA's aggregate over each covered series' newest sample in the last hour."""
    if not sla or not sla.get("metric"):
        return None
    try:
        series = sla_series(conn=conn, sla=sla, start=now - 3600.0, end=now, source=source)
    except PromSourceError as exc:  # the message goes out without the value
        log.warning("current value of SLA %r unavailable: %s", sla.get("name"), exc)
        return None
    last = [float(s.values[-1]) for s in series if len(s.values)]
    if not last:
        return None
    # The evaluator's aggregate, so a missing value is skipped the same way.
    value = aggregate(np.array(last)[:, None], sla.get("aggregate") or DEFAULT_AGGREGATE)[0]
    return None if math.isnan(value) else float(value)


def too_old(now: float, settings: ServiceSettings) -> str:
    """Say why a message about data as of ``now`` is too old to send ('' when it is not)."""
    limit = getattr(settings, "alert_max_age_seconds", None)
    age = time.time() - now
    if not limit or age <= limit:
        return ""
    return (
        f"about data {age / 3600:.1f} h old, over alert_max_age_seconds ({limit:g} s): "
        "recorded, not sent"
    )


def _rows_of(conn: Connection, incident_id: int) -> list[AlertOutbox]:
    stmt = select(AlertOutbox).where(AlertOutbox.incident_id == incident_id)
    return list(Session(conn).scalars(stmt.order_by(AlertOutbox.id)))


# Events an incident has at most once; the others (a changed top suspect, an escalation, an
# assignment, a snooze) may repeat, and each is told once.
ONCE = frozenset({"opened", "acknowledged", "resolved"})


def _key(incident_id: int, event: str, channel: str, top: str, n: int) -> str:
    if event in ONCE:
        return f"incident:{incident_id}:{event}:{channel}"
    digest = hashlib.sha256(top.encode()).hexdigest()[:16]
    return f"incident:{incident_id}:{event}:{n}:{digest}:{channel}"


def enqueue_incident_event(
    *,
    conn: Connection,
    incident: IncidentRecord,
    event: AlertEvent,
    settings: ServiceSettings,
    now: float | None = None,
    value: float | None = None,
    source: MetricSource | None = None,
) -> int:
    """Write the incident event's message for every routed channel; return rows written.

    Call it inside the transaction that changes the incident. ``incident`` is the API form
    (``get_incident``). A repeated call adds nothing; ``updated`` adds rows only when the
    top suspect changed since the last message. ``source`` serves the SLA's current value
    when its metric is kept outside the store (Prometheus).
    """
    now = time.time() if now is None else now
    try:
        config = load_config(settings)
    except (OSError, ValueError) as exc:  # never roll back the incident change for this
        log.error("alert routes unusable, incident %s not announced: %s", incident["id"], exc)
        return 0
    if not config.channels:
        return 0
    sla = get_sla(conn=conn, name=incident["sla"])
    if value is None:
        value = current_value(conn=conn, sla=sla, now=now, source=source)
    secret = secret_text(getattr(settings, "action_secret", None))
    message = build_message(
        incident,
        event,
        sla=sla,
        public_url=settings.public_url,
        value=value,
        now=now,
        actions=action_links(
            secret, public_url=settings.public_url, incident_id=int(incident["id"]), now=now
        ),
        interactive=bool(secret_text(getattr(settings, "slack_signing_secret", None))),
    )
    suspects = incident.get("suspects") or []
    top = suspect_key(suspects[0]) if suspects else ""
    earlier = _rows_of(conn, message.incident_id)
    if event == "updated" and (not earlier or earlier[-1].top_suspect == top):
        return 0  # nothing said yet (the opened message carries it) or the same top suspect
    n_before = sum(1 for r in earlier if r.event == event)
    stale = too_old(now, settings)
    snoozed = float(incident.get("snoozed_until") or 0.0)
    written = 0
    for channel in config.route(message.labels):
        fmt = alert_format(channel.kind)
        payload = fmt.render(message)
        mine = [r for r in earlier if r.channel == channel.name]
        if mine and isinstance(fmt, FollowingFormat):
            payload = fmt.follow(payload, mine[0].payload)
        until = silenced_until(conn=conn, labels=message.labels, channel=channel.name, now=now)
        if event == "updated" and snoozed > now:  # a snoozed incident's repeats wait
            until = max(until or 0.0, snoozed)
        if mine and all(r.status == "silenced" for r in mine):
            until = until or max(r.silenced_until or 0 for r in mine)  # nothing was said
        if stale or (mine and all(r.status == "stale" for r in mine)):
            status, until, error = "stale", None, stale or "the incident was never announced"
        else:
            status, error = ("silenced" if until else "pending"), ""
        written += insert_row(
            conn=conn,
            dedup_key=_key(message.incident_id, event, channel.name, top, n_before),
            incident_id=message.incident_id,
            event=event,
            channel=channel,
            payload=payload,
            labels=message.labels,
            now=now,
            top_suspect=top[:500],
            status=status,
            silenced_until=until,
            last_error=error,
        )
    return written


def insert_row(
    *,
    conn: Connection,
    dedup_key: str,
    incident_id: int | None,
    event: str,
    channel,
    payload: dict,
    labels: dict,
    now: float,
    top_suspect: str = "",
    status: str = "pending",
    silenced_until: float | None = None,
    last_error: str = "",
) -> bool:
    """Queue one message for one channel; return False when its dedup key is queued already."""
    row = {
        "dedup_key": dedup_key,
        "incident_id": incident_id,
        "event": event,
        "channel": channel.name,
        "kind": channel.kind,
        "payload": payload,
        "labels": labels,
        "top_suspect": top_suspect,
        "status": status,
        "silenced_until": silenced_until,
        "attempts": 0,
        "next_attempt_at": 0,
        "claimed_by": "",
        "claimed_until": 0,
        "created_at": now,
        "last_error": last_error,
    }
    stmt = upsert_insert(conn, AlertOutbox).values(**row)
    stmt = stmt.on_conflict_do_nothing(index_elements=["dedup_key"])
    return conn.execute(stmt.returning(AlertOutbox.id)).first() is not None


def outbox_dict(row: AlertOutbox, *, payload: bool = False, secrets: Sequence[str] = ()) -> dict:
    """Return the API form of an outbox row; its error is scrubbed of ``secrets`` again."""
    out = {
        "id": row.id,
        "incident_id": row.incident_id,
        "event": row.event,
        "channel": row.channel,
        "kind": row.kind,
        "status": row.status,
        "attempts": row.attempts,
        "next_attempt_at": row.next_attempt_at if row.status == "pending" else None,
        "created_at": row.created_at,
        "sent_at": row.sent_at,
        "silenced_until": row.silenced_until,
        "last_error": scrub(row.last_error, *secrets) if secrets else row.last_error,
        "top_suspect": row.top_suspect,
        "labels": row.labels,
    }
    if payload:
        out["payload"] = row.payload
    return out


def list_outbox(
    *,
    conn: Connection,
    status: str | None = None,
    incident_id: int | None = None,
    limit: int = 100,
    payload: bool = False,
    secrets: Sequence[str] = (),
) -> list[dict]:
    """Return outbox rows, newest first, errors scrubbed of ``secrets`` (``channel_secrets``)."""
    stmt = select(AlertOutbox).order_by(AlertOutbox.id.desc()).limit(limit)
    if status:
        stmt = stmt.where(AlertOutbox.status == status)
    if incident_id is not None:
        stmt = stmt.where(AlertOutbox.incident_id == incident_id)
    rows = Session(conn).scalars(stmt)
    return [outbox_dict(r, payload=payload, secrets=secrets) for r in rows]


def retry_row(*, conn: Connection, row_id: int, now: float) -> bool:
    """Put a failed row back to pending with fresh attempts; return False unless it failed."""
    result = conn.execute(
        update(AlertOutbox)
        .where(AlertOutbox.id == row_id, AlertOutbox.status == "failed")
        .values(status="pending", attempts=0, next_attempt_at=now, last_error="")
    )
    return result.rowcount == 1
