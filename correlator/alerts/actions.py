"""Signed incident actions: the links and button values a chat message carries.

A token names one incident and one action and when it expires, signed with the service's
``action_secret`` (HMAC-SHA256), so a click in chat needs no login: whoever holds the
message may act on that incident, that way, until then. Every replica given the same
secret accepts the others' tokens. No secret: messages carry no actions.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass

# What a chat message offers, in its order, with the button's words.
ACTIONS: dict[str, str] = {
    "acknowledge": "Acknowledge",
    "escalate": "Escalate",
    "snooze": "Snooze 1 h",
    "resolve": "Resolve",
}
LINK_TTL_S = 7 * 86400.0  # a week: past it the incident page still has the same buttons
MAX_TOKEN = 200
_TOKEN = re.compile(r"^([1-9][0-9]{0,9})\.([a-z]{1,16})\.([0-9]{1,12})\.([A-Za-z0-9_-]{22})$")


class ActionTokenError(ValueError):
    """A token that is malformed, forged or expired; the message says which, and what to do."""


@dataclass(frozen=True, slots=True)
class ActionLink:
    """One action offered in a message: its words, its signed token and the link that runs it."""

    action: str
    label: str
    token: str
    url: str


def secret_text(value) -> str | None:
    """Return a secret setting's text (a SecretStr or a str); None when unset or empty."""
    if value is None:
        return None
    text = value.get_secret_value() if hasattr(value, "get_secret_value") else str(value)
    return text or None


def _mac(secret: str, body: str) -> str:
    digest = hmac.new(secret.encode(), body.encode(), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def sign_action(secret: str, *, incident_id: int, action: str, expires: float) -> str:
    """Return the token allowing ``action`` on one incident until ``expires`` (unix seconds)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    body = f"{int(incident_id)}.{action}.{int(expires)}"
    return f"{body}.{_mac(secret, body)}"


def read_action(secret: str, token: str, *, now: float) -> tuple[int, str]:
    """Return (incident id, action) of a valid token; raise ActionTokenError otherwise."""
    found = _TOKEN.match(token) if len(token) <= MAX_TOKEN else None
    if found is None:
        raise ActionTokenError("not an action link of this service: copy the whole link")
    incident, action, expires, mac = found.groups()
    body = f"{incident}.{action}.{expires}"
    if not hmac.compare_digest(mac, _mac(secret, body)) or action not in ACTIONS:
        raise ActionTokenError(
            "this link was not signed by this service (or its action_secret changed): "
            "act on the incident page instead"
        )
    if now > int(expires):
        raise ActionTokenError(
            "this link has expired (links last a week): act on the incident page instead"
        )
    return int(incident), action


def action_links(
    secret: str | None, *, public_url: str, incident_id: int, now: float
) -> tuple[ActionLink, ...]:
    """Return the actions a message about an open incident offers; none without a secret."""
    if not secret:
        return ()
    out = []
    for action, label in ACTIONS.items():
        token = sign_action(
            secret, incident_id=incident_id, action=action, expires=now + LINK_TTL_S
        )
        out.append(ActionLink(action, label, token, action_url(public_url, token)))
    return tuple(out)


def action_url(public_url: str, token: str) -> str:
    """Return the page that confirms and runs a signed action (served by the API)."""
    return f"{public_url.rstrip('/')}/api/v1/act/{token}"
