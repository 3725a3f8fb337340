"""A configured channel, the HTTP request sent to it, and the helpers the formats share."""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Channel:
    """Where and how to send: a kind (platform format), a URL, an optional signing secret."""

    name: str
    kind: str
    url: str
    secret: str | None = None
    rate_per_minute: int = 20
    headers: dict[str, str] = field(default_factory=dict)
    # Alertmanager only: how often a firing alert is re-sent.
    resend_seconds: float = 60.0


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One POST to a channel."""

    url: str
    body: bytes
    headers: dict[str, str]


def json_body(payload) -> bytes:
    """Return the compact UTF-8 JSON of a payload."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def json_request(url: str, payload, headers: dict[str, str] | None = None) -> HttpRequest:
    """Return a JSON POST request."""
    return HttpRequest(
        url=url,
        body=json_body(payload),
        headers={"Content-Type": "application/json; charset=utf-8", **(headers or {})},
    )


REASONS = {
    400: "request refused",
    401: "credentials refused",
    403: "credentials refused",
    404: "no such webhook",
    410: "no such webhook",
    408: "timed out",
    413: "message too large",
    422: "message refused",
    429: "rate limited",
    504: "timed out",
}


def reason_class(status: int) -> str:
    """Return a short class of a non-2xx status: what the receiver said, in words."""
    if status in REASONS:
        return REASONS[status]
    if 300 <= status < 400:
        return "redirect, not followed"
    if 400 <= status < 500:
        return "request refused"
    return "receiver failed" if status >= 500 else "unexpected answer"


def http_error(status: int, text: str) -> str | None:
    """Return None on a 2xx answer, else the status, its class and 200 characters of text.

    The text must come scrubbed (``masking.scrub_cut``): it is a receiver's answer.
    """
    if 200 <= status < 300:
        return None
    return f"HTTP {status} ({reason_class(status)}): {text[:200]}"


def errcode_error(status: int, text: str, *keys: str) -> str | None:
    """Return None when a 2xx JSON answer carries code 0 under one of ``keys``."""
    failed = http_error(status, text)
    if failed:
        return failed
    try:
        answer = json.loads(text or "{}")
    except ValueError:
        return f"not JSON: {text[:200]}"
    for key in keys:
        if key in answer:
            return None if answer[key] == 0 else f"{key} {answer[key]}: {text[:200]}"
    return None
