"""Slack incoming webhook: Block Kit blocks with a plain-text fallback."""

from __future__ import annotations

from correlator.alerts.actions import ActionLink
from correlator.alerts.channels import Channel, HttpRequest, http_error, json_request
from correlator.alerts.messages import Message
from correlator.alerts.text import change_lines, facts, suspect_lines

SECTION_MAX = 3000
FIELD_MAX = 2000


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_MAX]}}


def _action_button(action: ActionLink, interactive: bool) -> dict:
    """Return an incident action's button: answered by the service (interactive) or a link."""
    button = {"type": "button", "text": {"type": "plain_text", "text": action.label}}
    if interactive:  # Slack posts the click to /api/v1/chat/slack/actions, with the user
        return button | {"action_id": f"causeline.{action.action}", "value": action.token}
    return button | {"url": action.url}


def render(message: Message) -> dict:
    """Return the Block Kit payload of a message."""
    fields = [
        {"type": "mrkdwn", "text": f"*{name}*\n{_escape(value)}"[:FIELD_MAX]}
        for name, value in facts(message)
    ]
    label = "Final top suspect" if message.event == "resolved" else "Top suspects"
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": message.title[:150]}},
        {"type": "section", "fields": fields[:10]},
        _section(f"*{label}*\n" + "\n".join(_escape(x) for x in suspect_lines(message))),
    ]
    if message.event != "resolved":
        changes = "\n".join(_escape(x) for x in change_lines(message))
        blocks.append(_section(f"*Changes in the window*\n{changes}"))
    blocks.append(
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Board at the breach"},
                    "url": message.board_url,
                },
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": f"Incident {message.incident_id}"},
                    "url": message.incident_url,
                    "style": "danger" if message.event != "resolved" else "primary",
                },
                *[_action_button(a, message.interactive) for a in message.actions],
            ],
        }
    )
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": message.thread_key}]})
    text = f"{message.title}: {message.value_line}; top suspect {message.top_suspect or 'none'}"
    return {"text": text, "blocks": blocks}


def request(payload: dict, channel: Channel, *, now: float, delivery_id: str) -> HttpRequest:
    """Return the POST to the webhook URL."""
    return json_request(channel.url, payload, channel.headers)


def error(status: int, text: str) -> str | None:
    """Return None when Slack accepted the message."""
    return http_error(status, text)
