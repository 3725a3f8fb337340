"""Microsoft Teams workflow webhook: a message with one Adaptive Card attachment."""

from __future__ import annotations

from correlator.alerts.channels import Channel, HttpRequest, http_error, json_request
from correlator.alerts.messages import Message
from correlator.alerts.text import change_lines, facts, suspect_lines

CARD_TYPE = "application/vnd.microsoft.card.adaptive"


def _text(text: str, **extra) -> dict:
    return {"type": "TextBlock", "text": text, "wrap": True, **extra}


def render(message: Message) -> dict:
    """Return the workflow payload of a message."""
    color = "Attention" if message.event != "resolved" else "Good"
    label = "Final top suspect" if message.event == "resolved" else "Top suspects"
    body = [
        _text(message.title, size="Large", weight="Bolder", color=color),
        {"type": "FactSet", "facts": [{"title": n, "value": v} for n, v in facts(message)]},
        _text(label, weight="Bolder"),
        *[_text(line) for line in suspect_lines(message)],
    ]
    if message.event != "resolved":
        body += [_text("Changes in the window", weight="Bolder")]
        body += [_text(line) for line in change_lines(message)]
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
        "actions": [
            {"type": "Action.OpenUrl", "title": "Board at the breach", "url": message.board_url},
            {
                "type": "Action.OpenUrl",
                "title": f"Incident {message.incident_id}",
                "url": message.incident_url,
            },
            *[{"type": "Action.OpenUrl", "title": a.label, "url": a.url} for a in message.actions],
        ],
    }
    return {
        "type": "message",
        "attachments": [{"contentType": CARD_TYPE, "contentUrl": None, "content": card}],
    }


def request(payload: dict, channel: Channel, *, now: float, delivery_id: str) -> HttpRequest:
    """Return the POST to the workflow's URL."""
    return json_request(channel.url, payload, channel.headers)


def error(status: int, text: str) -> str | None:
    """Return None on a 2xx answer (workflows answer 202 Accepted)."""
    return http_error(status, text)
