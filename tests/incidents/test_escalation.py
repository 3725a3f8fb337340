"""Escalate, assign and snooze: by hand (API, CLI) and by itself when nobody acknowledges."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from correlator.alerts.outbox import list_outbox
from correlator.api.app import create_app
from correlator.incidents.escalation import escalate_due
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.incidents import get_incident, open_incident, snooze_incident
from correlator.store.oncall import add_rotation, escalation_chain
from correlator.store.slas import save_sla
from correlator.store.tokens import create_token

HOOK = {"channels": [{"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/h"}]}
WEEK = 7 * 86400.0
T0 = 1_800_000_000.0


def _rotation(members, team="infra", start=T0 - WEEK / 2):
    return {
        "name": f"{team}-primary",
        "team": team,
        "model": "",
        "members": members,
        "start": start,
        "period_days": 7,
    }


def test_the_chain_starts_with_whoever_is_on_call_then_the_next_members():
    rotations = [_rotation(["ana", "bo", "cy"], start=T0 - WEEK - 1)]  # bo's week now
    assert [
        c["person"] for c in escalation_chain(rotations, [], team="infra", model="m", at=T0)
    ] == [
        "bo",
        "cy",
        "ana",
    ]
    override = {"team": "infra", "model": "", "person": "cy", "contact": "", "start": T0 - 1}
    override |= {"end": T0 + 60, "reason": "swap"}
    chain = escalation_chain(rotations, [override], team="infra", model="m", at=T0)
    assert [c["person"] for c in chain] == ["cy", "bo", "ana"]  # each person once
    assert escalation_chain(rotations, [], team="algo", model="m", at=T0) == []


@pytest.fixture
def service(engine):
    """Yield a writer client of a service with a webhook channel, and the engine."""
    settings = ServiceSettings(database_url=str(engine.url), alert_routes_json=json.dumps(HOOK))
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="ci")
        save_sla(
            conn=conn,
            sla={"name": "ranker-p99", "metric": "latency_p99_ms", "op": ">", "threshold": 50.0},
        )
    with TestClient(create_app(settings, engine=engine)) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        yield client, engine, settings


def _open(engine, now: float, sla: str = "ranker-p99") -> int:
    with write_transaction(engine) as conn:
        return open_incident(
            conn=conn, sla=sla, severity="major", breach_start=now - 60, now=now, by="test"
        )


def _events(engine, incident_id) -> list[str]:
    """Return the incident's queued message events, oldest first."""
    with engine.connect() as conn:
        return [r["event"] for r in reversed(list_outbox(conn=conn, incident_id=incident_id))]


def test_escalating_by_hand_walks_the_chain_and_tells_each_step_once(service):
    client, engine, _ = service
    import time

    now = time.time()
    with write_transaction(engine) as conn:
        add_rotation(conn=conn, rotation=_rotation(["ana", "bo"], start=now - 60))
    incident_id = _open(engine, now)
    path = f"/api/v1/incidents/{incident_id}"
    first = client.post(f"{path}/escalate", json={"author": "li.wei", "text": "no answer"})
    assert first.status_code == 200, first.text
    assert first.json()["assignee"] == "bo" and first.json()["escalations"] == 1
    assert first.json()["notes"][-1]["text"] == "Escalated by li.wei to bo (level 1): no answer"
    second = client.post(f"{path}/escalate", json={"author": "li.wei"}).json()
    assert (
        second["escalations"] == 2
        and "nobody further on call in infra" in (second["notes"][-1]["text"])
    )
    assert second["assignee"] is None  # the message says so, not the last one's name
    assert _events(engine, incident_id).count("escalated") == 2  # one message per step
    with engine.connect() as conn:
        rows = list_outbox(conn=conn, incident_id=incident_id, payload=True)
    titles = sorted(r["payload"]["title"] for r in rows if r["event"] == "escalated")
    assert titles == [
        "[MAJOR] Escalated to bo (level 1): ranker-p99",
        "[MAJOR] Escalated to nobody further on call (level 2): ranker-p99",
    ]
    assigned = client.post(f"{path}/assign", json={"person": "wang.fang", "author": "li.wei"})
    assert assigned.status_code == 200 and assigned.json()["assignee"] == "wang.fang"
    assert client.post(f"{path}/assign", json={"person": ""}).status_code == 422
    snoozed = client.post(f"{path}/snooze", json={"minutes": 30, "author": "li.wei"}).json()
    assert snoozed["snoozed_until"] == pytest.approx(now + 1800, abs=120)
    assert client.post(f"{path}/snooze", json={"minutes": 99999}).status_code == 422
    assert client.post(f"{path}/resolve", json={"author": "li.wei"}).status_code == 200
    late = client.post(f"{path}/escalate", json={"author": "li.wei"})
    assert late.status_code == 409 and "is resolved" in late.text
    assert client.post("/api/v1/incidents/999/escalate").status_code == 404
    assert _events(engine, incident_id) == [
        "escalated",
        "escalated",
        "assigned",
        "snoozed",
        "resolved",
    ]


def test_an_unacknowledged_incident_escalates_by_itself_on_its_slas_policy(service):
    client, engine, settings = service
    with write_transaction(engine) as conn:
        add_rotation(conn=conn, rotation=_rotation(["ana", "bo", "cy"], start=T0 - 60))
        sla = {"name": "ranker-p99", "metric": "latency_p99_ms", "op": ">", "threshold": 50.0}
        save_sla(conn=conn, sla=sla | {"escalate_after_minutes": 10})
    incident_id = _open(engine, T0)
    assert escalate_due(engine, now=T0 + 599, settings=settings) == []
    assert escalate_due(engine, now=T0 + 600, settings=settings) == [incident_id]
    assert escalate_due(engine, now=T0 + 601, settings=settings) == []  # the next waits 10 min
    with engine.connect() as conn:
        inc = get_incident(conn=conn, incident_id=incident_id)
    assert inc["assignee"] == "bo" and inc["escalations"] == 1
    assert inc["notes"][-1]["text"] == (
        "Escalated by causeline to bo (level 1): unacknowledged for 10 min"
    )
    # A snooze (on this test's clock, from T0) holds the next level until it ends.
    with write_transaction(engine) as conn:
        snooze_incident(conn=conn, incident_id=incident_id, until=T0 + 3600)
    assert escalate_due(engine, now=T0 + 1300, settings=settings) == []
    assert escalate_due(engine, now=T0 + 3600, settings=settings) == [incident_id]
    # Acknowledged: never again.
    client.post(f"/api/v1/incidents/{incident_id}/acknowledge", json={"author": "cy"})
    assert escalate_due(engine, now=T0 + 99_999, settings=settings) == []
    assert _events(engine, incident_id).count("escalated") == 2


def test_no_policy_no_escalation_and_the_service_default_applies(engine):
    with write_transaction(engine) as conn:
        save_sla(conn=conn, sla={"name": "s", "metric": "m_ms", "op": ">", "threshold": 1.0})
    incident_id = _open(engine, T0, sla="s")
    off = ServiceSettings(database_url=str(engine.url))
    assert escalate_due(engine, now=T0 + 86400, settings=off) == []
    on = ServiceSettings(database_url=str(engine.url), escalate_after_minutes=5)
    assert escalate_due(engine, now=T0 + 300, settings=on) == [incident_id]


def test_escalate_assign_snooze_from_the_command_line(service, capsys):
    from causeline.cli import main

    _, engine, _ = service
    import time

    incident_id = _open(engine, time.time())
    url = engine.url.render_as_string(hide_password=False)
    common = ["--author", "sam.ops", "--database-url", url]
    assert main(["incident", "escalate", str(incident_id), *common]) == 0
    assert f"incident {incident_id} escalated by sam.ops" in capsys.readouterr().out
    assert main(["incident", "assign", str(incident_id), "li.wei", *common]) == 0
    assert main(["incident", "snooze", str(incident_id), "--minutes", "15", *common]) == 0
    with pytest.raises(SystemExit) as refused:
        main(["incident", "snooze", str(incident_id), "--minutes", "-1", *common])
    assert refused.value.code == 2
    assert "give more than 0" in capsys.readouterr().err
    with engine.connect() as conn:
        inc = get_incident(conn=conn, incident_id=incident_id)
    assert inc["assignee"] == "li.wei" and inc["snoozed_until"] is not None
