"""Incidents from history: evaluating a past time opens the incident imported data shows."""

from __future__ import annotations

import json
import time

from fastapi.testclient import TestClient

from causeline.cli import main
from correlator.analysis import analyze
from correlator.api.app import create_app
from correlator.bundle import read_bundle
from correlator.incidents.evaluator import LEASE, evaluate_once
from correlator.incidents.headline import headline
from correlator.incidents.snapshot import analyze_stored
from correlator.settings import ServiceSettings
from correlator.store.bundles import import_bundle
from correlator.store.engine import write_transaction
from correlator.store.lease import take_lease
from correlator.store.tokens import create_token
from tests.conftest import scenarios_dir
from tests.helpers import insert_samples, store_series

PETSHOP = scenarios_dir() / "petshop-low" / "petshop-low_traffic-test-issue_0"
PUBLIC = scenarios_dir() / "public" / "01-input-length-drift"
HOOK = {"channels": [{"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/hook"}]}


def _client(engine, **extra) -> TestClient:
    settings = ServiceSettings(
        database_url=engine.url.render_as_string(hide_password=False),
        alert_routes_json=json.dumps(HOOK),
        **extra,
    )
    client = TestClient(create_app(settings, engine=engine))
    with write_transaction(engine) as conn:
        client.headers["Authorization"] = f"Bearer {create_token(conn=conn, name='t')}"
    return client


def _suspect(s: dict) -> tuple:
    if s["kind"] == "change":
        return ("change", s["id"])
    return (s.get("metric"), tuple(sorted(s["labels"].items())))


def test_evaluating_a_past_time_opens_the_imported_declared_breach(engine):
    bundle = read_bundle(PETSHOP)
    direct = analyze(bundle)
    import_bundle(engine=engine, bundle=bundle)
    at = bundle.sla["breach_start"] + 60
    with _client(engine) as c:
        before = c.post("/api/v1/evaluate", params={"at": bundle.sla["breach_start"] - 60})
        assert before.status_code == 200
        assert before.json()["opened"] == []
        assert "no declared breach ongoing" in before.json()["reason"]

        report = c.post("/api/v1/evaluate", params={"at": at}).json()
        assert len(report["opened"]) == 1, report
        inc = c.get(f"/api/v1/incidents/{report['opened'][0]}").json()
        assert inc["breach_start"] == bundle.sla["breach_start"]
        assert _suspect(inc["suspects"][0]) == _suspect(direct["suspects"][0])

        again = c.post("/api/v1/evaluate", params={"at": at + 30}).json()
        assert again["opened"] == [] and "declared breach since" in again["reason"]
        outbox = c.get("/api/v1/alerts/outbox").json()
    rows = outbox["data"] if isinstance(outbox, dict) else outbox
    assert [r["status"] for r in rows] == ["stale"]
    assert "not sent" in rows[0]["last_error"]


def test_evaluating_a_past_threshold_breach_opens_it_and_alerts_when_asked(engine):
    bundle = read_bundle(PUBLIC)
    direct = analyze(bundle)
    import_bundle(engine=engine, bundle=bundle)
    at = direct["breach_start"] + 120
    with _client(engine, alert_max_age_seconds=None) as c:
        report = c.post("/api/v1/evaluate", params={"at": at}).json()
        assert len(report["opened"]) == 1, report
        inc = c.get(f"/api/v1/incidents/{report['opened'][0]}").json()
        outbox = c.get("/api/v1/alerts/outbox").json()
    assert abs(inc["breach_start"] - direct["breach_start"]) <= 2 * direct["grid_step"]
    assert _suspect(inc["suspects"][0]) == _suspect(direct["suspects"][0])
    assert all(s["next_step"] and "person" in s for s in inc["suspects"][:5])
    rows = outbox["data"] if isinstance(outbox, dict) else outbox
    assert [r["status"] for r in rows] == ["pending"]  # no age limit: sent as usual


def test_incident_evaluate_says_who_holds_the_lease(capsys, db_url, engine):
    import_bundle(engine=engine, bundle=read_bundle(PETSHOP))
    with write_transaction(engine) as conn:
        assert take_lease(conn=conn, name=LEASE, holder="svc-host:4242:ab", now=1e10, seconds=1e9)
    assert main(["incident", "evaluate", "--at", "1681886000", "--database-url", db_url]) == 3
    said = capsys.readouterr()
    out = json.loads(said.out)
    assert out["held_lease"] is False
    assert "svc-host:4242:ab" in out["reason"] and "POST /api/v1/evaluate" in out["reason"]
    assert "nothing evaluated" in said.err and "/api/v1/evaluate?at=1681886000" in said.err


def test_incident_evaluate_with_no_sla_exits_non_zero(capsys, db_url, engine):
    assert main(["incident", "evaluate", "--at", "1681886000", "--database-url", db_url]) == 3
    assert "no SLA is stored" in capsys.readouterr().err


def test_evaluate_with_nothing_to_check_says_why(engine):
    report = evaluate_once(engine, holder="me", now=1_700_000_000, settings=ServiceSettings())
    assert report["held_lease"] and report["opened"] == []
    assert report["reason"].startswith("no SLA is stored")


def test_the_cli_opens_and_resolves_as_the_api_does_with_its_messages(
    capsys, db_url, engine, monkeypatch
):
    """`incident evaluate` and `incident resolve` queue the opened and resolved messages."""
    from correlator.alerts.outbox import list_outbox

    monkeypatch.setenv("CAUSELINE_ALERT_ROUTES_JSON", json.dumps(HOOK))
    monkeypatch.setenv("CAUSELINE_ALERT_MAX_AGE_SECONDS", "1e10")
    bundle = read_bundle(PUBLIC)
    import_bundle(engine=engine, bundle=bundle)
    at = analyze(bundle)["breach_start"] + 120
    argv = ["--database-url", db_url]
    assert main(["incident", "evaluate", "--at", str(at), *argv]) == 0
    opened = json.loads(capsys.readouterr().out)["opened"]
    assert len(opened) == 1
    assert main(["incident", "resolve", str(opened[0]), "--text", "rolled back", *argv]) == 0
    assert f"incident {opened[0]} resolved" in capsys.readouterr().out
    with engine.connect() as conn:
        events = [r["event"] for r in list_outbox(conn=conn, incident_id=opened[0])]
    assert sorted(events) == ["opened", "resolved"]
    assert main(["incident", "resolve", str(opened[0]), *argv]) == 2  # once only
    assert "already resolved" in capsys.readouterr().err
    with engine.connect() as conn:
        assert len(list_outbox(conn=conn, incident_id=opened[0])) == 2


def test_a_sample_stamped_years_ahead_does_not_hide_the_latest_breach(engine):
    bundle = read_bundle(PUBLIC)
    assert "breach_start" not in bundle.sla  # found by the SLA's threshold, not declared
    import_bundle(engine=engine, bundle=bundle)
    before = analyze_stored(engine, bundle.sla["name"], None)
    assert before["window"]["breach"] == "threshold"
    ids = store_series(engine, 1)  # a series of a host whose clock is years ahead
    assert insert_samples(engine, ids, [[time.time() + 3 * 365 * 86_400]], [[1.0]]) == 1
    after = analyze_stored(engine, bundle.sla["name"], None)
    assert after["breach_start"] == before["breach_start"]
    assert [_suspect(s) for s in after["suspects"][:5]] == [
        _suspect(s) for s in before["suspects"][:5]
    ]


def test_import_says_how_to_open_its_incident_and_that_command_opens_it(capsys, db_url, engine):
    bundle_dir = str(PUBLIC.parent / "06-gpu-thermal")
    assert main(["import", bundle_dir, "--database-url", db_url]) == 0
    said = capsys.readouterr().out
    command = next(line.strip() for line in said.splitlines() if "incident evaluate" in line)
    assert "/board?model=video_recall_v4&from=" in said
    assert main(command.removeprefix("causeline ").split()) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["opened"]) == 1, report


def test_lists_say_where_the_top_suspect_is_and_when_a_declared_breach_began(
    capsys, db_url, engine
):
    import_bundle(engine=engine, bundle=read_bundle(PETSHOP))
    assert main(["sla", "list", "--database-url", db_url]) == 0
    listed = capsys.readouterr().out
    assert "declared breach from 2023-" in listed and "None" not in listed
    bundle = read_bundle(PETSHOP)
    at = str(round(bundle.sla["breach_start"] + 60))
    assert main(["incident", "evaluate", "--at", at, "--database-url", db_url]) == 0
    capsys.readouterr()
    assert main(["incident", "list", "--database-url", db_url]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    top = analyze(bundle)["suspects"][0]
    assert f"top: {top['metric']}{{" in line and f"service={top['labels']['service']}" in line


def test_an_imported_incident_is_marked_and_resolved_where_its_data_ends(engine):
    from correlator.incidents.evaluator import IMPORTED_GRACE_S
    from correlator.store.recordings import list_recordings

    bundle = read_bundle(PETSHOP)  # a declared breach: no threshold to recover by
    import_bundle(engine=engine, bundle=bundle)
    with engine.connect() as conn:
        (window,) = list_recordings(conn=conn)
    with _client(engine) as c:
        opened = c.post("/api/v1/evaluate", params={"at": bundle.sla["breach_start"] + 60})
        (incident_id,) = opened.json()["opened"]
        inc = c.get(f"/api/v1/incidents/{incident_id}").json()
        assert inc["status"] == "open" and inc["imported"]["source"] == window.source
        assert inc["headline"] == headline(inc) and inc["suspects"][0]["owner"] in inc["headline"]
        assert (inc["imported"]["start"], inc["imported"]["end"]) == (window.start, window.end)
        soon = c.post("/api/v1/evaluate", params={"at": window.end + 60}).json()
        assert soon["resolved"] == []  # within the grace: an import may be evaluated again
        later = window.end + IMPORTED_GRACE_S + 1
        assert c.post("/api/v1/evaluate", params={"at": later}).json()["resolved"] == [incident_id]
        inc = c.get(f"/api/v1/incidents/{incident_id}").json()
    assert inc["status"] == "resolved" and inc["breach_end"] == window.end
    assert "resolved at" in inc["notes"][-1]["text"] and "its data ends" in inc["notes"][-1]["text"]


def test_an_imported_threshold_incident_is_resolved_at_the_recovery_its_data_shows(engine):
    from correlator.incidents.evaluator import IMPORTED_GRACE_S
    from correlator.store.recordings import list_recordings

    bundle = read_bundle(PUBLIC.parent / "06-gpu-thermal")
    direct = analyze(bundle)
    import_bundle(engine=engine, bundle=bundle)
    with engine.connect() as conn:
        (window,) = list_recordings(conn=conn)
    with _client(engine) as c:
        at = direct["breach_start"] + bundle.sla["for_seconds"] + 60
        (incident_id,) = c.post("/api/v1/evaluate", params={"at": at}).json()["opened"]
        later = window.end + IMPORTED_GRACE_S + 1
        assert c.post("/api/v1/evaluate", params={"at": later}).json()["resolved"] == [incident_id]
        inc = c.get(f"/api/v1/incidents/{incident_id}").json()
    assert inc["status"] == "resolved" and inc["breach_start"] < inc["breach_end"] <= window.end
