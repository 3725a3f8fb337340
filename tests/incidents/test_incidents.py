"""Incidents: evaluator lifecycle from an imported bundle, notes, re-rank, review, leases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from correlator.analysis import confidence
from correlator.api.app import create_app
from correlator.bundle import read_bundle
from correlator.settings import ServiceSettings
from correlator.store.bundles import import_bundle
from correlator.store.engine import write_transaction
from correlator.store.lease import lease_holder, take_lease
from correlator.store.tsdb.read import time_bounds
from tests.conftest import scenarios_dir
from tests.helpers import count_rows, field_of, unlabelled_samples

ROOT = Path(__file__).resolve().parents[2]
SLA = {
    "name": "m p99",
    "metric": "model_latency_p99_ms",
    "labels": {"model": "m"},
    "op": ">",
    "threshold": 50,
    "for_seconds": 60,
    "severity": "critical",
}


def _latency(client, t0: float, values: list[float], instance: str = "i-0") -> None:
    series = [
        {
            "name": "model_latency_p99_ms",
            "labels": {"model": "m", "instance": instance},
            "timestamps": [t0 + 15 * k for k in range(len(values))],
            "values": values,
        },
        {
            "name": "model_queue_length",
            "labels": {"model": "m", "instance": instance},
            "timestamps": [t0 + 15 * k for k in range(len(values))],
            "values": [v / 10 for v in values],
        },
    ]
    resp = client.post("/api/v1/ingest", json={"series": series})
    assert resp.status_code == 200, resp.text


def test_incident_lifecycle_from_an_imported_bundle(client, engine):
    folder = scenarios_dir() / "public" / "01-input-length-drift"
    if not folder.exists():
        pytest.skip(f"{folder} is missing")
    truth = json.loads((folder / "truth.json").read_text())
    import_bundle(engine=engine, bundle=read_bundle(folder))
    with engine.connect() as conn:
        _, last = time_bounds(conn=conn)
    during = truth["breach_start"] + 600
    client.post(
        "/api/v1/oncall/rotations",
        json={"name": "a", "team": "algo", "members": ["li.wei"], "start": during - 86400},
    )
    report = client.post("/api/v1/evaluate", params={"at": during}).json()
    assert report["held_lease"] and len(report["opened"]) == 1
    inc_id = report["opened"][0]
    assert client.post("/api/v1/evaluate", params={"at": during + 30}).json()["opened"] == []

    inc = client.get(f"/api/v1/incidents/{inc_id}").json()
    assert inc["status"] == "open" and inc["sla"] == "video_recall_v4 p99 latency"
    assert abs(inc["breach_start"] - truth["breach_start"]) <= 30
    top = inc["suspects"][0]
    assert top["metric"] == "model_input_length_bucket"
    assert top["labels"]["model"] == "video_recall_v4"
    assert inc["scope"]["kind"] in ("local", "global")
    assert 0 < inc["confidence"] < 1
    assert inc["confidence_says"] == confidence.say(inc["confidence"])
    assert [s["segment"] for s in inc["chain"]] == ["input", "model", "output", "downstream"]
    assert inc["chain"][0]["status"] == "suspect" and inc["chain"][0]["owner"] == "algo"
    assert {c["id"] for c in inc["changes"]} == {"chg-751", "chg-752"}
    assert inc["oncall"]["algo"]["person"] == "li.wei"

    for team, text in (("infra", "GPU util flat at 30%"), ("algo", "inputs doubled in length")):
        note = client.post(
            f"/api/v1/incidents/{inc_id}/notes",
            json={"author": f"{team}-1", "team": team, "text": text},
        )
        assert note.status_code == 201, note.text
    rerank = client.post(f"/api/v1/incidents/{inc_id}/rerank")
    assert rerank.status_code == 200 and rerank.json()["suspects"][0]["metric"] == top["metric"]
    listed = client.get("/api/v1/incidents", params={"status": "open"}).json()
    assert [i["id"] for i in listed] == [inc_id]

    done = client.post("/api/v1/evaluate", params={"at": last}).json()
    assert done["resolved"] == [inc_id]
    inc = client.get(f"/api/v1/incidents/{inc_id}").json()
    assert inc["status"] == "resolved" and inc["resolved_by"] == "evaluator"
    assert inc["breach_end"] > inc["breach_start"]
    assert sorted(n["team"] for n in inc["notes"]) == ["algo", "infra", "other"]

    review = client.get(f"/api/v1/incidents/{inc_id}/review")
    assert review.status_code == 200 and review.headers["content-type"].startswith("text/markdown")
    text = review.text
    for heading in ("## Summary", "## Impact", "## Timeline", "## Triggers", "## Action items"):
        assert heading in text
    assert "inputs doubled in length" in text and "model_input_length_bucket" in text
    assert "chg-751" in text

    analysis = client.post("/api/v1/analyze", json={"sla": "video_recall_v4 p99 latency"}).json()
    assert abs(analysis["breach_start"] - truth["breach_start"]) <= 30
    assert analysis["suspects"][0]["metric"] == "model_input_length_bucket"


def test_incident_errors_and_manual_resolve(client, anon):
    assert client.get("/api/v1/incidents/999").status_code == 404
    assert client.get("/api/v1/incidents/0").status_code == 404
    assert client.post("/api/v1/incidents/999/notes", json={"text": "x"}).status_code == 404
    assert client.post("/api/v1/incidents/999/resolve").status_code == 404
    assert client.post("/api/v1/incidents/999/rerank").status_code == 404
    assert client.get("/api/v1/incidents/999/review").status_code == 404
    assert client.get("/api/v1/incidents", params={"status": "closed"}).status_code == 422
    assert client.post("/api/v1/analyze", json={"sla": "nope"}).status_code == 404
    assert anon.post("/api/v1/evaluate").status_code == 401

    client.post("/api/v1/slas", json=SLA)
    empty = client.post("/api/v1/analyze", json={"sla": SLA["name"]})
    assert empty.status_code == 422 and "sla" in field_of(empty)
    t0 = 1_733_000_000.0
    _latency(client, t0, [20] * 20 + [90] * 10)
    opened = client.post("/api/v1/evaluate", params={"at": t0 + 15 * 29}).json()["opened"]
    assert len(opened) == 1
    inc = opened[0]
    bad = client.post(f"/api/v1/incidents/{inc}/notes", json={"text": "", "team": "algo"})
    assert bad.status_code == 422 and "text" in field_of(bad)
    bad = client.post(f"/api/v1/incidents/{inc}/notes", json={"text": "x", "team": "ops"})
    assert bad.status_code == 422 and "team" in field_of(bad)
    res = client.post(f"/api/v1/incidents/{inc}/resolve", json={"author": "li", "text": "rollback"})
    assert res.status_code == 200 and res.json()["resolved_by"] == "li"
    assert client.post(f"/api/v1/incidents/{inc}/resolve").status_code == 409
    # Still breaching, but resolved by hand during this breach: not reopened.
    _latency(client, t0 + 15 * 30, [90] * 4)
    assert client.post("/api/v1/evaluate", params={"at": t0 + 15 * 33}).json()["opened"] == []
    # Recovery, then a new breach: a new incident.
    _latency(client, t0 + 15 * 34, [20] * 10 + [95] * 8)
    again = client.post("/api/v1/evaluate", params={"at": t0 + 15 * 51}).json()["opened"]
    assert len(again) == 1 and again[0] != inc
    summaries = client.get("/api/v1/incidents").json()
    assert [s["status"] for s in summaries] == ["open", "resolved"]


def test_lease_is_exclusive_until_it_expires(engine):
    with write_transaction(engine) as conn:
        assert take_lease(conn=conn, name="x", holder="a", now=100, seconds=10)
    with write_transaction(engine) as conn:
        assert not take_lease(conn=conn, name="x", holder="b", now=105, seconds=10)
        assert take_lease(conn=conn, name="x", holder="a", now=105, seconds=10)  # renew
    with write_transaction(engine) as conn:
        assert not take_lease(conn=conn, name="x", holder="b", now=114, seconds=10)
        assert take_lease(conn=conn, name="x", holder="b", now=116, seconds=10)
    with engine.connect() as conn:
        assert lease_holder(conn=conn, name="x", now=117) == "b"


@pytest.mark.postgres
def test_two_evaluator_processes_open_one_incident(client, engine, db_url):
    if not db_url.startswith("postgresql"):
        pytest.skip("the multi-process test runs on PostgreSQL")
    client.post("/api/v1/slas", json=SLA)
    t0 = 1_733_000_000.0
    _latency(client, t0, [20] * 20 + [90] * 10, instance="i-0")
    _latency(client, t0, [20] * 30, instance="i-1")
    at = t0 + 15 * 29
    start_at = time.time() + 2.0
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.incidents.evaluator_worker",
                db_url,
                "6",
                str(at),
                str(start_at),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        reports.append([json.loads(line) for line in out.splitlines() if line.strip()])
    assert all(len(r) == 6 for r in reports)
    holders = {r["holder"] for rs in reports for r in rs if r["held_lease"]}
    assert len(holders) == 1  # the lease keeps the other process out
    opened = [i for rs in reports for r in rs for i in r["opened"]]
    assert len(opened) == 1
    assert count_rows(engine, "incidents") == 1


def test_service_lifespan_runs_the_evaluator(engine):
    from correlator.store.slas import upsert_sla
    from correlator.store.tsdb.ingest import store_batch  # noqa: F401  (ingest path exists)

    now = time.time()
    with write_transaction(engine) as conn:
        upsert_sla(conn=conn, sla=SLA)
    settings = ServiceSettings(
        database_url=str(engine.url), evaluator_enabled=True, evaluator_interval_seconds=0.2
    )
    app = create_app(settings, engine=engine)
    with TestClient(app) as c:
        from correlator.store.tokens import create_token

        with write_transaction(engine) as conn:
            token = create_token(conn=conn, name="w")
        c.headers["Authorization"] = f"Bearer {token}"
        _latency(c, now - 15 * 29, [20] * 20 + [90] * 10)
        deadline = time.time() + 20
        while time.time() < deadline and not c.get("/api/v1/incidents").json():
            time.sleep(0.2)
        got = c.get("/api/v1/incidents").json()
        scraped = unlabelled_samples(c.get("/metrics").text)
    assert len(got) == 1 and got[0]["status"] == "open" and got[0]["severity"] == "critical"
    # The service says what its evaluator did: passes run, how long the last took.
    assert scraped["causeline_evaluator_passes_total"] >= 1
    assert scraped["causeline_evaluator_lease_held"] == 1
    assert scraped["causeline_evaluator_last_pass_slas"] == 1
    assert 0 < scraped["causeline_evaluator_last_pass_seconds"] < 20
    assert (
        scraped["causeline_evaluator_pass_seconds_total"]
        >= (scraped["causeline_evaluator_last_pass_seconds"])
    )


def test_a_pass_slower_than_the_interval_is_counted_and_warned(caplog):
    from correlator.incidents.evaluator import PassStats, _record

    stats = PassStats()
    _record(stats, {"held_lease": False}, 5.0)
    _record(stats, {"held_lease": True, "seconds": 7.5, "checked": 100}, 5.0)
    assert (stats.passes, stats.skipped, stats.last_seconds, stats.last_checked) == (1, 1, 7.5, 100)
    assert stats.holds_lease
    assert "took 7.5 s for 100 SLAs, longer than the 5 s interval" in caplog.text
    caplog.clear()
    _record(stats, {"held_lease": True, "seconds": 1.0, "checked": 100}, 5.0)
    assert caplog.text == "" and stats.seconds == 8.5


def test_a_clean_stop_hands_the_evaluator_lease_over_at_once(engine, monkeypatch):
    from correlator.incidents import evaluator

    passes: list[str] = []

    def slow_pass(engine, *, holder, lease_seconds, **_kwargs):
        with write_transaction(engine) as conn:
            take_lease(conn=conn, name=evaluator.LEASE, holder=holder, now=time.time(), seconds=90)
        time.sleep(0.5)  # the stop comes while this pass runs
        with engine.connect() as conn:  # not given up under a running pass
            passes.append(lease_holder(conn=conn, name=evaluator.LEASE, now=time.time()))

    monkeypatch.setattr(evaluator, "evaluate_once", slow_pass)
    settings = ServiceSettings(
        database_url=str(engine.url), evaluator_enabled=True, lease_seconds=90
    )
    app = create_app(settings, engine=engine)
    with TestClient(app):
        time.sleep(0.2)
    assert passes == [app.state.evaluator_holder]
    with engine.connect() as conn:
        assert lease_holder(conn=conn, name=evaluator.LEASE, now=time.time()) is None
    with write_transaction(engine) as conn:  # the next holder, not 90 s later
        assert take_lease(
            conn=conn, name=evaluator.LEASE, holder="next", now=time.time(), seconds=90
        )
