"""DingTalk robot: markdown, optionally signed in the query string."""

from __future__ import annotations

import base64
import hashlib
import hmac
from urllib.parse import quote_plus

from correlator.alerts.channels import Channel, HttpRequest, errcode_error, json_request
from correlator.alerts.messages import Message
from correlator.alerts.text import markdown


def sign(timestamp_ms: int, secret: str) -> str:
    """Return DingTalk's signature: base64 HMAC-SHA256(secret, 'timestamp\\nsecret'), urlencoded."""
    digest = hmac.new(
        secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256
    ).digest()
    return quote_plus(base64.b64encode(digest))


def render(message: Message) -> dict:
    """Return the markdown payload of a message."""
    return {
        "msgtype": "markdown",
        "markdown": {"title": message.title[:64], "text": markdown(message)},
        "at": {"atMobiles": [], "isAtAll": False},
    }


def request(payload: dict, channel: Channel, *, now: float, delivery_id: str) -> HttpRequest:
    """Return the POST, with &timestamp=&sign= when the robot has a signing secret."""
    url = channel.url
    if channel.secret:
        ts = int(now * 1000)
        url += ("&" if "?" in url else "?") + f"timestamp={ts}&sign={sign(ts, channel.secret)}"
    return json_request(url, payload, channel.headers)


def error(status: int, text: str) -> str | None:
    """Return None when DingTalk answered errcode 0."""
    return errcode_error(status, text, "errcode")
