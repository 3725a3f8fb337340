"""Incident actions from chat: signed links (any channel) and Slack's interactive buttons.

A link opens a page that says what it will do and asks for a name; only the page's POST
acts, so a chat's link preview, which fetches every URL, changes nothing. Slack's buttons
post to ``/api/v1/chat/slack/actions``, checked with Slack's signing secret; the user who
clicked is who acted. Either way the button carries a token of ``correlator.alerts.actions``
for one incident and action, and the action runs as the incident page's does.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse

from correlator.alerts.actions import ACTIONS, ActionTokenError, read_action, secret_text
from correlator.alerts.messages import incident_url
from correlator.analysis.render import when
from correlator.api.deps import EngineDep, SettingsDep, SourceDep
from correlator.api.handlers import now, read, write
from correlator.api.schemas.base import Out
from correlator.incidents.announce import (
    Act,
    acknowledge_and_announce,
    escalate_and_announce,
    resolve_by_hand,
    snooze_and_announce,
)
from correlator.limits import MAX_NAME
from correlator.store.incidents import get_incident

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from correlator.records.incident import IncidentRecord
    from correlator.settings import ServiceSettings


router = APIRouter(tags=["chat actions"])


class SlackAnswer(Out):
    """What the service answers Slack: the outcome in words, or what was wrong."""

    text: str | None = None
    error: str | None = None


SNOOZE_MINUTES = 60.0  # what a chat's Snooze does; the page and the API take any length
SLACK_MAX_SKEW_S = 300.0  # Slack's own advice: refuse requests older than five minutes
MAX_FORM_BYTES = 16_384


def _snooze(**kwargs):
    return snooze_and_announce(minutes=SNOOZE_MINUTES, **kwargs)


RUN = {
    "acknowledge": acknowledge_and_announce,
    "escalate": escalate_and_announce,
    "snooze": _snooze,
    "resolve": resolve_by_hand,
}
DONE = {
    "acknowledge": "acknowledged",
    "escalate": "escalated",
    "snooze": f"snoozed for {SNOOZE_MINUTES:g} min",
    "resolve": "resolved",
}


async def run_action(
    engine: Engine,
    settings: ServiceSettings,
    source,
    *,
    incident_id: int,
    action: str,
    by: str,
    via: str,
) -> str | None:
    """Run a signed action by ``by``; return None when done, else why not."""
    act = Act(incident_id, now(), by, settings, source, f"from {via}")
    return await write(engine, RUN[action], act=act)


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width'>"
        f"<title>{escape(title)} - causeline</title>"
        "<style>body{font:16px system-ui,sans-serif;max-width:40em;margin:3em auto;"
        "padding:0 1em}button{font-size:1em;padding:.4em 1.2em}input{font-size:1em}</style>"
        f"</head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )
    # The page holds a token: keep it out of caches and other sites' Referer headers.
    headers = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
    return HTMLResponse(html, status_code=status, headers=headers)


async def _check(
    engine: Engine, settings: ServiceSettings, token: str
) -> tuple[int, str, IncidentRecord] | HTMLResponse:
    """Return (incident id, action, incident) of a valid link, else the page saying why not."""
    secret = secret_text(settings.action_secret)
    if not secret:
        return _page(
            "Chat actions are off",
            "<p>This service has no <code>action_secret</code>: act on the incident page.</p>",
            404,
        )
    try:
        incident_id, action = read_action(secret, token, now=now())
    except ActionTokenError as exc:
        return _page("This link does not work", f"<p>{escape(str(exc))}.</p>", 403)
    incident = await read(engine, get_incident, incident_id=incident_id)
    if incident is None:
        return _page("No such incident", f"<p>Incident {incident_id} does not exist.</p>", 404)
    return incident_id, action, incident


def _about(incident: IncidentRecord, settings: ServiceSettings) -> str:
    url = incident_url(settings.public_url, incident["id"])
    taken = incident.get("acknowledged_by")
    state = f"{incident['status']}" + (f", acknowledged by {taken}" if taken else "")
    return (
        f"<p>Incident <a href='{escape(url)}'>{incident['id']}</a>: SLA "
        f"<b>{escape(str(incident['sla']))}</b>, breached since "
        f"{escape(when(incident['breach_start']))}; {escape(state)}.</p>"
    )


@router.get("/api/v1/act/{token}", include_in_schema=False, response_class=HTMLResponse)
async def confirm(token: str, engine: EngineDep, settings: SettingsDep) -> HTMLResponse:
    """Say what a signed link will do and ask who does it; change nothing."""
    checked = await _check(engine, settings, token)
    if isinstance(checked, HTMLResponse):
        return checked
    _, action, incident = checked
    form = (
        f"<form method='post'><label>Your name <input name='name' required maxlength="
        f"'{MAX_NAME}' autofocus></label> <button type='submit'>{ACTIONS[action]}</button>"
        "</form>"
    )
    return _page(f"{ACTIONS[action]} incident {incident['id']}?", _about(incident, settings) + form)


@router.post("/api/v1/act/{token}", include_in_schema=False, response_class=HTMLResponse)
async def act(
    token: str, request: Request, engine: EngineDep, settings: SettingsDep, source: SourceDep
) -> HTMLResponse:
    """Run a signed link's action as the name given in its form."""
    checked = await _check(engine, settings, token)
    if isinstance(checked, HTMLResponse):
        return checked
    incident_id, action, _ = checked
    raw = await request.body()
    form = parse_qs(raw[:MAX_FORM_BYTES].decode("utf-8", "replace"), max_num_fields=8)
    name = (form.get("name") or [""])[0].strip()
    if not name or len(name) > MAX_NAME or not name.isprintable():
        return _page(
            "Who are you?", f"<p>Give your name (1 to {MAX_NAME} printable characters).</p>", 422
        )
    refused = await run_action(
        engine,
        settings,
        source,
        incident_id=incident_id,
        action=action,
        by=name,
        via="a chat link",
    )
    incident = await read(engine, get_incident, incident_id=incident_id)
    about = _about(incident, settings)
    if refused:
        return _page("Nothing done", f"<p>{escape(refused)}.</p>{about}", 409)
    return _page(f"Incident {incident_id} {DONE[action]} by {name}", about)


def slack_signature(secret: str, timestamp: str, body: bytes) -> str:
    """Return Slack's request signature: v0= HMAC-SHA256 of 'v0:timestamp:body', in hex."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def _slack_user(payload: dict) -> str:
    user = payload.get("user")
    if not isinstance(user, dict):
        return ""
    name = str(user.get("username") or user.get("name") or user.get("id") or "")[:MAX_NAME]
    return name if name.isprintable() else ""


@router.post(
    "/api/v1/chat/slack/actions",
    response_model=SlackAnswer,
    response_model_exclude_unset=True,
    responses={401: {"description": "not signed by Slack, or older than 5 minutes"}},
)
async def slack_actions(
    request: Request, engine: EngineDep, settings: SettingsDep, source: SourceDep
) -> JSONResponse:
    """Run the incident action of a Slack button; 401 unless Slack signed the request."""
    signing, secret = (
        secret_text(settings.slack_signing_secret),
        secret_text(settings.action_secret),
    )
    if not signing or not secret:
        return JSONResponse(
            {
                "error": "Slack actions need slack_signing_secret and "
                "action_secret set on the service"
            },
            404,
        )
    raw = await request.body()
    stamp = request.headers.get("x-slack-request-timestamp", "")
    given = request.headers.get("x-slack-signature", "")
    try:
        skew = abs(time.time() - float(stamp))
    except ValueError:
        skew = float("inf")
    if skew > SLACK_MAX_SKEW_S or not hmac.compare_digest(
        given, slack_signature(signing, stamp, raw)
    ):
        return JSONResponse({"error": "not signed by Slack, or older than 5 minutes"}, 401)
    try:
        form = parse_qs(raw.decode("utf-8"), max_num_fields=8)
        payload = json.loads((form.get("payload") or ["{}"])[0])
        clicked = payload["actions"][0]
        incident_id, action = read_action(secret, str(clicked.get("value", "")), now=now())
    except ActionTokenError as exc:
        return JSONResponse({"text": str(exc)})
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return JSONResponse({"error": "payload: not a Slack block_actions payload"}, 400)
    by = _slack_user(payload) or "someone in Slack"
    refused = await run_action(
        engine, settings, source, incident_id=incident_id, action=action, by=by, via="Slack"
    )
    return JSONResponse({"text": refused or f"Incident {incident_id} {DONE[action]} by {by}"})
