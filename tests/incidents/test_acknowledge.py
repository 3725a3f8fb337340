"""Acknowledge: who took an open incident and when, on it and on its timeline, once."""

from __future__ import annotations

from alembic import command

from correlator.bundle import read_bundle
from correlator.store.bundles import import_bundle
from correlator.store.migrate import alembic_config, current_revision, upgrade
from tests.conftest import scenarios_dir

PETSHOP = scenarios_dir() / "petshop-low" / "petshop-low_traffic-test-issue_0"


def _open_incident(client) -> int:
    bundle = read_bundle(PETSHOP)
    import_bundle(engine=client.app.state.engine, bundle=bundle)
    at = bundle.sla["breach_start"] + 60
    (incident_id,) = client.post("/api/v1/evaluate", params={"at": at}).json()["opened"]
    return incident_id


def test_acknowledge_once_then_resolve_with_a_note(client, anon):
    incident_id = _open_incident(client)
    path = f"/api/v1/incidents/{incident_id}"
    assert client.get(path).json()["acknowledged_at"] is None
    assert anon.post(f"{path}/acknowledge").status_code == 401
    took = client.post(f"{path}/acknowledge", json={"author": "li.wei", "text": "on it"})
    assert took.status_code == 200, took.text
    inc = took.json()
    assert inc["acknowledged_by"] == "li.wei" and inc["acknowledged_at"] is not None
    assert inc["notes"][-1]["text"] == "Acknowledged by li.wei: on it"
    again = client.post(f"{path}/acknowledge", json={"author": "wang.fang"})
    assert again.status_code == 409 and "acknowledged by li.wei" in again.text
    listed = client.get("/api/v1/incidents").json()
    assert [i["acknowledged_by"] for i in listed if i["id"] == incident_id] == ["li.wei"]
    done = client.post(f"{path}/resolve", json={"author": "li.wei", "text": "cache rebuilt"})
    assert done.status_code == 200 and done.json()["status"] == "resolved"
    late = client.post(f"{path}/acknowledge", json={"author": "x"})
    assert late.status_code == 409 and "is resolved" in late.text


def test_the_migration_adds_and_removes_the_columns(engine):
    config = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0010")
    assert current_revision(engine) == "0010"
    upgrade(engine)
    assert current_revision(engine) == "0012"


def test_acknowledge_from_the_command_line(client, capsys):
    from causeline.cli import main

    incident_id = _open_incident(client)
    url = client.app.state.engine.url.render_as_string(hide_password=False)
    args = ["incident", "ack", str(incident_id), "--author", "sam.ops", "--database-url", url]
    assert main([*args, "--text", "on it"]) == 0
    assert f"incident {incident_id} acknowledged by sam.ops" in capsys.readouterr().out
    assert main(args) == 2
    assert "was acknowledged by sam.ops" in capsys.readouterr().err
    inc = client.get(f"/api/v1/incidents/{incident_id}").json()
    assert inc["acknowledged_by"] == "sam.ops" and inc["notes"][-1]["text"].endswith("on it")


def test_acknowledging_sends_one_follow_up_message(engine):
    import json

    from fastapi.testclient import TestClient

    from correlator.alerts.outbox import list_outbox
    from correlator.api.app import create_app
    from correlator.settings import ServiceSettings
    from correlator.store.engine import write_transaction
    from correlator.store.tokens import create_token

    hook = {"channels": [{"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/h"}]}
    settings = ServiceSettings(
        database_url=engine.url.render_as_string(hide_password=False),
        alert_routes_json=json.dumps(hook),
    )
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="w")
    with TestClient(create_app(settings, engine=engine)) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        incident_id = _open_incident(client)
        path = f"/api/v1/incidents/{incident_id}/acknowledge"
        assert client.post(path, json={"author": "li.wei"}).status_code == 200
        assert client.post(path, json={"author": "x"}).status_code == 409  # no second message
    with engine.connect() as conn:
        rows = list_outbox(conn=conn, incident_id=incident_id, payload=True)
    acked = [r for r in rows if r["event"] == "acknowledged"]
    assert len(acked) == 1 and sorted(r["event"] for r in rows) == ["acknowledged", "opened"]
    assert (
        acked[0]["payload"]["title"].startswith("[")
        and "Acknowledged by li.wei" in (acked[0]["payload"]["title"])
    )
