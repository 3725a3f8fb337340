"""WeCom (WeChat Work) group robot: markdown of at most 4096 bytes."""

from __future__ import annotations

from correlator.alerts.channels import Channel, HttpRequest, errcode_error, json_request
from correlator.alerts.messages import Message
from correlator.alerts.text import markdown

MAX_BYTES = 4096


def _fit(text: str) -> str:
    data = text.encode()
    if len(data) <= MAX_BYTES:
        return text
    return data[: MAX_BYTES - 4].decode(errors="ignore") + "\n..."


def render(message: Message) -> dict:
    """Return the markdown payload of a message."""
    color = "warning" if message.event != "resolved" else "info"
    text = markdown(message, bold=lambda t: f'<font color="{color}">{t}</font>')
    return {"msgtype": "markdown", "markdown": {"content": _fit(text)}}


def request(payload: dict, channel: Channel, *, now: float, delivery_id: str) -> HttpRequest:
    """Return the POST to the robot's webhook URL."""
    return json_request(channel.url, payload, channel.headers)


def error(status: int, text: str) -> str | None:
    """Return None when WeCom answered errcode 0."""
    return errcode_error(status, text, "errcode")
