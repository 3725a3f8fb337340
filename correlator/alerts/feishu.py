"""Feishu/Lark custom bot: an interactive card, optionally signed."""

from __future__ import annotations

import base64
import hashlib
import hmac

from correlator.alerts.channels import Channel, HttpRequest, errcode_error, json_request
from correlator.alerts.messages import Message
from correlator.alerts.text import markdown


def sign(timestamp: int, secret: str) -> str:
    """Return Feishu's signature: HMAC-SHA256 keyed by 'timestamp\\nsecret' over nothing, base64."""
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


FEISHU_COLOURS = {"opened": "red", "updated": "orange", "escalated": "red", "resolved": "green"}


def render(message: Message) -> dict:
    """Return the interactive-card payload of a message."""
    body = markdown(message, heading="", actions=False).split("\n", 2)[-1]
    template = FEISHU_COLOURS.get(message.event, "blue")
    return {
        "msg_type": "interactive",
        "card": {
            "config": {"wide_screen_mode": True},
            "header": {
                "title": {"tag": "plain_text", "content": message.title},
                "template": template,
            },
            "elements": [
                {"tag": "div", "text": {"tag": "lark_md", "content": body}},
                {
                    "tag": "action",
                    "actions": [
                        {
                            "tag": "button",
                            "text": {"tag": "plain_text", "content": "Board at the breach"},
                            "type": "primary",
                            "url": message.board_url,
                        },
                        {
                            "tag": "button",
                            "text": {
                                "tag": "plain_text",
                                "content": f"Incident {message.incident_id}",
                            },
                            "type": "default",
                            "url": message.incident_url,
                        },
                        *[
                            {
                                "tag": "button",
                                "text": {"tag": "plain_text", "content": a.label},
                                "type": "danger" if a.action == "escalate" else "default",
                                "url": a.url,
                            }
                            for a in message.actions
                        ],
                    ],
                },
            ],
        },
    }


def request(payload: dict, channel: Channel, *, now: float, delivery_id: str) -> HttpRequest:
    """Return the POST, with timestamp and sign added when the bot has a secret."""
    if channel.secret:
        ts = int(now)
        payload = {"timestamp": str(ts), "sign": sign(ts, channel.secret), **payload}
    return json_request(channel.url, payload, channel.headers)


def error(status: int, text: str) -> str | None:
    """Return None when Feishu answered code 0."""
    return errcode_error(status, text, "code", "StatusCode")
