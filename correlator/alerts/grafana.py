"""Grafana annotations: each incident event on Grafana's own timeline, tagged, linking back.

``POST <grafana>/api/annotations`` with a service account token (the channel's ``secret``)
as ``Authorization: Bearer``. Without a dashboard the annotation belongs to the
organisation: a dashboard shows it through an annotation query on the tag ``causeline``
(and ``model:NAME``, ``team:...``, ``severity:...``). An opened or updated incident is a
point at the breach start; a resolved one is a region from the breach start to its end.
A change is a point at the time it happened (``render_change``).
"""

from __future__ import annotations

from html import escape

from correlator.alerts.channels import Channel, HttpRequest, http_error, json_request
from correlator.alerts.messages import Message

API_PATH = "/api/annotations"
MAX_TAG = 100  # characters of one tag Grafana stores


def _tags(*tags: str) -> list[str]:
    """Return the tags given, empty ones left out, each cut to what Grafana stores."""
    return [t[:MAX_TAG] for t in tags if t]


def render(message: Message) -> dict:
    """Return the annotation of one incident event (times in epoch milliseconds)."""
    top = message.suspects[0] if message.suspects else None
    lines = [f"<b>{escape(message.title)}</b>", escape(message.value_line)]
    if top is not None:
        lines.append(f"Top suspect: {escape(top.what)} ({escape(top.owner)})")
    link = escape(message.incident_url, quote=True)
    lines.append(f'<a href="{link}">incident #{message.incident_id} in causeline</a>')
    time_ms = round(message.since * 1000)  # Grafana's unit
    annotation = {
        "time": time_ms,
        "tags": _tags(
            "causeline",
            f"incident:{message.incident_id}",
            f"event:{message.event}",
            f"sla:{message.sla}",
            f"model:{message.model}" if message.model else "",
            f"team:{message.team}" if message.team else "",
            f"severity:{message.severity}",
        ),
        "text": "<br>".join(lines),
    }
    if message.event == "resolved" and message.resolved_at:
        annotation["timeEnd"] = max(time_ms, round(message.resolved_at * 1000))
    return annotation


def render_change(change: dict, public_url: str = "") -> dict:
    """Return the annotation of a change done (a deploy, a config, an image...)."""
    labels = change.get("labels") or {}
    target = str(change.get("target") or "")
    on_model = target.removeprefix("model:") if target.startswith("model:") else ""
    model = labels.get("model") or on_model
    tags = _tags(
        "causeline",
        "change",
        f"change:{change['id']}",
        f"kind:{change.get('kind') or 'other'}",
        f"team:{change['owner']}" if change.get("owner") else "",
        f"model:{model}" if model else "",
        "unplanned" if change.get("unplanned") else "",
    )
    who = change.get("person") or change.get("author") or ""
    lines = [
        f"<b>{escape(str(change.get('kind') or 'change'))} {escape(str(change['id']))}</b>",
        escape(str(change.get("summary") or "")),
        escape(" · ".join(x for x in (target, str(who)) if x)),
    ]
    if public_url:
        link = escape(f"{public_url.rstrip('/')}/changes", quote=True)
        lines.append(f'<a href="{link}">change calendar in causeline</a>')
    return {
        "time": round(float(change["ts"]) * 1000),
        "tags": tags,
        "text": "<br>".join(line for line in lines if line),
    }


def request(payload: dict, channel: Channel, *, now: float, delivery_id: str) -> HttpRequest:
    """Return the POST to Grafana's annotations API, with the token when one is configured."""
    base = channel.url.rstrip("/")
    url = base if base.endswith(API_PATH) else base + API_PATH
    headers = dict(channel.headers)
    if channel.secret:
        headers["Authorization"] = f"Bearer {channel.secret}"
    return json_request(url, payload, headers)


def error(status: int, text: str) -> str | None:
    """Return None when Grafana stored the annotation (2xx)."""
    return http_error(status, text)
