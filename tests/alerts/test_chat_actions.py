"""Incident actions from chat: signed links, Slack's buttons, and what each message offers."""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from correlator.alerts.actions import (
    ActionTokenError,
    action_links,
    read_action,
    sign_action,
)
from correlator.alerts.messages import build_message
from correlator.alerts.outbox import list_outbox
from correlator.alerts.slack import render as slack
from correlator.alerts.webhook import render as webhook
from correlator.api.app import create_app
from correlator.api.routes.chat_actions import slack_signature
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.incidents import get_incident, open_incident

SECRET = "s3cret-for-actions"
SLACK = "slack-signing-secret"
HOOK = {"channels": [{"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/h"}]}


def test_a_token_names_one_incident_and_action_and_expires():
    token = sign_action(SECRET, incident_id=7, action="acknowledge", expires=2e9)
    assert read_action(SECRET, token, now=1.9e9) == (7, "acknowledge")
    forged = token.replace(".acknowledge.", ".resolve.")
    for bad, says in (
        (forged, "not signed by this service"),
        (token[:-2] + "AA", "not signed by this service"),
        ("7.acknowledge.2000000000", "copy the whole link"),
        ("x" * 500, "copy the whole link"),
    ):
        with pytest.raises(ActionTokenError, match=says):
            read_action(SECRET, bad, now=1.9e9)
    with pytest.raises(ActionTokenError, match="not signed"):
        read_action("another secret", token, now=1.9e9)
    with pytest.raises(ActionTokenError, match="expired"):
        read_action(SECRET, token, now=2e9 + 1)
    assert action_links(None, public_url="http://x", incident_id=7, now=0) == ()


@pytest.fixture
def service(engine):
    """Yield a client of a service with chat actions on, a webhook channel, and an incident."""
    settings = ServiceSettings(
        database_url=str(engine.url),
        alert_routes_json=json.dumps(HOOK),
        action_secret=SECRET,
        slack_signing_secret=SLACK,
        public_url="http://testserver",
    )
    now = time.time()
    with write_transaction(engine) as conn:
        incident_id = open_incident(
            conn=conn, sla="ranker-p99", severity="major", breach_start=now - 60, now=now, by="t"
        )
    with TestClient(create_app(settings, engine=engine)) as client:  # no token: links only
        yield client, engine, incident_id


def _link(incident_id: int, action: str) -> str:
    token = sign_action(SECRET, incident_id=incident_id, action=action, expires=time.time() + 60)
    return f"/api/v1/act/{token}"


def _incident(engine, incident_id) -> dict:
    with engine.connect() as conn:
        return get_incident(conn=conn, incident_id=incident_id)


def test_a_link_asks_first_and_acts_once_on_its_post(service):
    client, engine, incident_id = service
    link = _link(incident_id, "acknowledge")
    page = client.get(link)  # what a chat's link preview fetches
    assert page.status_code == 200 and "Acknowledge incident" in page.text
    assert "<form method='post'>" in page.text and page.headers["cache-control"] == "no-store"
    assert _incident(engine, incident_id)["acknowledged_by"] is None
    nameless = client.post(link, content="name=", headers=_form())
    assert nameless.status_code == 422 and "Give your name" in nameless.text
    control = client.post(link, content="name=a%1b%5b31mb", headers=_form())
    assert control.status_code == 422  # an escape sequence is not a name
    done = client.post(link, content=urlencode({"name": "li.wei"}), headers=_form())
    assert done.status_code == 200 and f"Incident {incident_id} acknowledged by li.wei" in done.text
    inc = _incident(engine, incident_id)
    assert inc["acknowledged_by"] == "li.wei"
    assert inc["notes"][-1]["text"] == "Acknowledged by li.wei: from a chat link"
    again = client.post(link, content="name=wang.fang", headers=_form())
    assert again.status_code == 409 and "was acknowledged by li.wei" in again.text
    assert client.get(link.replace("acknowledge", "resolve")).status_code == 403
    assert client.get("/api/v1/act/12.acknowledge.99.zz").status_code == 403
    gone = sign_action(SECRET, incident_id=999, action="escalate", expires=time.time() + 60)
    assert client.get(f"/api/v1/act/{gone}").status_code == 404


def test_without_a_secret_links_are_refused_and_messages_offer_none(engine):
    settings = ServiceSettings(database_url=str(engine.url))
    token = sign_action(SECRET, incident_id=1, action="acknowledge", expires=time.time() + 60)
    with TestClient(create_app(settings, engine=engine)) as client:
        page = client.get(f"/api/v1/act/{token}")
        assert page.status_code == 404 and "action_secret" in page.text
        assert client.post("/api/v1/chat/slack/actions", content="payload={}").status_code == 404


def _form() -> dict:
    return {"Content-Type": "application/x-www-form-urlencoded"}


def _slack_post(client, payload: dict, *, secret: str = SLACK, age: float = 0.0):
    body = urlencode({"payload": json.dumps(payload)}).encode()
    stamp = str(int(time.time() - age))
    headers = _form() | {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": slack_signature(secret, stamp, body),
    }
    return client.post("/api/v1/chat/slack/actions", content=body, headers=headers)


def test_a_slack_button_acts_as_the_user_who_clicked_it(service):
    client, engine, incident_id = service
    token = sign_action(SECRET, incident_id=incident_id, action="escalate", expires=2e10)
    payload = {
        "type": "block_actions",
        "user": {"id": "U1", "username": "li.wei"},
        "actions": [{"action_id": "causeline.escalate", "value": token}],
    }
    assert _slack_post(client, payload, secret="wrong").status_code == 401
    assert _slack_post(client, payload, age=600).status_code == 401  # a replay
    done = _slack_post(client, payload)
    assert done.status_code == 200 and "escalated by li.wei" in done.json()["text"]
    inc = _incident(engine, incident_id)
    assert inc["escalations"] == 1 and "Escalated by li.wei" in inc["notes"][-1]["text"]
    assert _slack_post(client, {"actions": []}).status_code == 400
    with engine.connect() as conn:
        events = [r["event"] for r in list_outbox(conn=conn, incident_id=incident_id)]
    assert events == ["escalated"]


def test_messages_carry_the_actions_as_each_channel_can(engine):
    incident = {"id": 3, "sla": "ranker-p99", "status": "open", "breach_start": 1.7e9}
    links = action_links(SECRET, public_url="https://cl.example", incident_id=3, now=1.7e9)
    message = build_message(incident, "opened", sla=None, public_url="x", now=1.7e9, actions=links)
    hooked = webhook(message)["actions"]
    assert list(hooked) == ["acknowledge", "escalate", "snooze", "resolve"]
    assert hooked["acknowledge"].startswith("https://cl.example/api/v1/act/3.acknowledge.")
    buttons = slack(message)["blocks"][-2]["elements"]
    assert [b.get("url", "")[:30] for b in buttons[2:]] == ["https://cl.example/api/v1/act/"] * 4
    interactive = build_message(
        incident, "opened", sla=None, public_url="x", now=1.7e9, actions=links, interactive=True
    )
    clicks = slack(interactive)["blocks"][-2]["elements"][2:]
    assert [b["action_id"] for b in clicks] == [
        "causeline.acknowledge",
        "causeline.escalate",
        "causeline.snooze",
        "causeline.resolve",
    ]
    assert all("url" not in b and b["value"].startswith("3.") for b in clicks)
    done = build_message(
        incident | {"status": "resolved"},
        "resolved",
        sla=None,
        public_url="x",
        now=1.7e9,
        actions=links,
    )
    assert webhook(done)["actions"] == {}  # nothing to do once resolved
