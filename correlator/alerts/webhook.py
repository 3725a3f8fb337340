"""Generic JSON webhook: a documented schema, signed with HMAC-SHA256 in a header."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import asdict

from correlator.alerts.channels import Channel, HttpRequest, http_error, json_request
from correlator.alerts.messages import Message

SCHEMA = "causeline.alert.v1"
SIGNATURE_HEADER = "X-Causeline-Signature"
TIMESTAMP_HEADER = "X-Causeline-Timestamp"
DELIVERY_HEADER = "X-Causeline-Delivery"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Return 'sha256=' + hex HMAC-SHA256(secret, timestamp + '.' + body)."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, headers, body: bytes, *, now: float, tolerance: float = 300.0) -> bool:
    """Check a delivery's signature and that its timestamp is recent (what receivers do)."""
    ts = headers.get(TIMESTAMP_HEADER, "")
    given = headers.get(SIGNATURE_HEADER, "")
    if not ts.isdigit() or abs(now - int(ts)) > tolerance:
        return False
    return hmac.compare_digest(given, signature(secret, ts, body))


def render(message: Message) -> dict:
    """Return the documented JSON body of a message."""
    data = asdict(message)
    links = {"board": data.pop("board_url"), "incident": data.pop("incident_url")}
    data.pop("interactive")
    data["actions"] = {a.action: a.url for a in message.actions}  # signed links, may be {}
    return {"schema": SCHEMA, **data, "top_suspect": message.top_suspect, "links": links}


def request(payload: dict, channel: Channel, *, now: float, delivery_id: str) -> HttpRequest:
    """Return the POST with delivery id, timestamp and (with a secret) signature headers."""
    req = json_request(channel.url, payload, channel.headers)
    ts = str(int(now))
    req.headers[DELIVERY_HEADER] = delivery_id
    req.headers[TIMESTAMP_HEADER] = ts
    if channel.secret:
        req.headers[SIGNATURE_HEADER] = signature(channel.secret, ts, req.body)
    return req


def error(status: int, text: str) -> str | None:
    """Return None on a 2xx answer."""
    return http_error(status, text)
