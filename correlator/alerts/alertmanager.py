"""Prometheus Alertmanager: POST /api/v2/alerts, re-sent while firing, endsAt on resolve."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from correlator.alerts.channels import Channel, HttpRequest, http_error, json_request
from correlator.alerts.messages import Message
from correlator.alerts.text import suspect_lines

ALERTNAME = "CauselineSLABreach"
# Labels that name the alert; they never change during an incident, so it stays one alert.
STABLE = ("alertname", "source", "incident", "sla", "model", "severity", "team")


def iso(ts: float) -> str:
    """Return an RFC 3339 UTC time."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def label_name(name: str) -> str:
    """Return a valid Prometheus label name."""
    name = re.sub(r"[^a-zA-Z0-9_]", "_", name)
    return name if re.match(r"[a-zA-Z_]", name) else f"_{name}"


def render(message: Message) -> dict:
    """Return one alert (the API takes a list; ``request`` wraps it)."""
    labels = {
        "alertname": ALERTNAME,
        "source": "causeline",
        "incident": str(message.incident_id),
        "sla": message.sla,
        "model": message.model,
        "severity": message.severity,
        "team": message.team or "unknown",
    }
    top = message.suspects[0] if message.suspects else None
    annotations = {
        "summary": f"{message.title}: {message.value_line}",
        "description": "\n".join(suspect_lines(message)),
        "condition": message.condition,
        "scope": message.scope,
        "top_suspect": message.top_suspect,
        "top_suspect_owner": top.owner if top else "",
        "oncall_algo": message.oncall["algo"],
        "oncall_infra": message.oncall["infra"],
        "board_url": message.board_url,
        "incident_url": message.incident_url,
    }
    alert = {
        "labels": {label_name(k): str(v) for k, v in labels.items() if v != ""},
        "annotations": annotations,
        "startsAt": iso(message.since),
        "generatorURL": message.incident_url,
    }
    if message.event == "resolved":
        alert["endsAt"] = iso(message.resolved_at or message.since)
    return alert


def follow(payload: dict, first: dict) -> dict:
    """Keep the first message's labels and startsAt, so updates and resolve hit the same alert."""
    return payload | {"labels": first["labels"], "startsAt": first["startsAt"]}


def firing(payload: dict) -> bool:
    """Say whether an alert payload is a firing one (to re-send while the incident is open)."""
    return "endsAt" not in payload


def request(payload: dict, channel: Channel, *, now: float, delivery_id: str) -> HttpRequest:
    """Return the POST to /api/v2/alerts; a firing alert ends in 4 re-send periods."""
    alert = dict(payload)
    if firing(alert):
        alert["endsAt"] = iso(now + 4 * channel.resend_seconds)
    url = channel.url.rstrip("/")
    if not url.endswith("/api/v2/alerts"):
        url += "/api/v2/alerts"
    return json_request(url, [alert], channel.headers)


def error(status: int, text: str) -> str | None:
    """Return None when Alertmanager accepted the alerts."""
    return http_error(status, text)
