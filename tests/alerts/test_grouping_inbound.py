"""A breach on many instances sends one message; Alertmanager's webhook feeds the timeline."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient
from sqlalchemy import select

from collector.schema import Batch, SeriesBatch
from correlator.alerts.worker import OutboxWorker
from correlator.api.app import create_app
from correlator.incidents.evaluator import evaluate_once
from correlator.store.engine import write_transaction
from correlator.store.events import list_events
from correlator.store.incidents import get_incident, list_incidents
from correlator.store.slas import upsert_sla
from correlator.store.tables import AlertOutbox
from correlator.store.tokens import create_token
from correlator.store.tsdb.ingest import store_batch
from tests.alerts.conftest import alert_settings, store_incident
from tests.alerts.samples import SLA


def test_breach_on_fifty_instances_sends_one_message(engine, receiver):
    settings = alert_settings(engine, [{"name": "hook", "kind": "webhook", "url": receiver.url}])
    end = time.time()
    ts = [end - 600 + 15 * k for k in range(41)]
    series = [
        SeriesBatch(
            name="model_latency_p99_ms",
            labels={"model": "click_rank_v3", "instance": f"i-{i}"},
            timestamps=ts,
            values=[20.0 if t < end - 300 else 120.0 + i for t in ts],
        )
        for i in range(50)
    ]
    store_batch(engine=engine, batch=Batch(series=series))
    with write_transaction(engine) as conn:
        upsert_sla(conn=conn, sla=SLA | {"for_seconds": 60})
    report = evaluate_once(engine, holder="t", now=end, settings=settings)
    assert len(report["opened"]) == 1
    assert evaluate_once(engine, holder="t", now=end + 15, settings=settings)["opened"] == []
    OutboxWorker(engine, settings, holder="w").run_once()
    assert len(receiver.posts) == 1
    body = receiver.posts[0]["json"]
    assert body["event"] == "opened" and body["condition"].startswith("model_latency_p99_ms > 50")
    assert "169 ms vs threshold 50 ms" in body["value_line"]  # max over the 50 instances
    # Recovery resolves the incident and its resolve message follows in the same thread.
    later = [end + 15 * k for k in range(1, 12)]
    recovered = [
        SeriesBatch(name=s.name, labels=s.labels, timestamps=later, values=[20.0] * len(later))
        for s in series
    ]
    store_batch(engine=engine, batch=Batch(series=recovered))
    assert evaluate_once(engine, holder="t", now=later[-1], settings=settings)["resolved"]
    OutboxWorker(engine, settings, holder="w").run_once()
    assert [p["json"]["event"] for p in receiver.posts] == ["opened", "resolved"]


def _am_body(alerts: list[dict]) -> dict:
    return {
        "version": "4",
        "groupKey": '{}:{alertname="X"}',
        "status": "firing",
        "receiver": "causeline",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://am:9093",
        "alerts": alerts,
    }


def _alert(labels: dict, status="firing", fp="f1") -> dict:
    return {
        "status": status,
        "labels": labels,
        "annotations": {"summary": "feature service slow"},
        "startsAt": "2026-12-02T08:00:00.123456789Z",
        "endsAt": "0001-01-01T00:00:00Z" if status == "firing" else "2026-12-02T08:10:00Z",
        "generatorURL": "http://prom/graph",
        "fingerprint": fp,
    }


def test_alertmanager_webhook_becomes_events_and_notes(engine):
    incident = store_incident(engine)
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="alertmanager")
        upsert_sla(conn=conn, sla=SLA | {"name": "feature sla"})
    settings = alert_settings(engine, [])
    with TestClient(create_app(settings, engine=engine)) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        body = _am_body(
            [
                _alert({"alertname": "FeatureSlow", "model": "click_rank_v3"}, fp="a"),
                _alert({"alertname": "Other", "causeline_sla": "feature sla"}, fp="b"),
                _alert({"alertname": "CauselineSLABreach", "source": "causeline"}, fp="c"),
                _alert({"alertname": "FeatureSlow", "model": "x"}, status="resolved", fp="a"),
            ]
        )
        first = client.post("/api/v1/hooks/alertmanager", json=body)
        assert first.status_code == 200, first.text
        assert first.json()["events"] == 4 and incident["id"] in first.json()["attached"]
        assert len(first.json()["opened"]) == 1
        again = client.post("/api/v1/hooks/alertmanager", json=body).json()
        assert again == {"events": 0, "attached": [], "opened": []}
        assert (
            client.post(
                "/api/v1/hooks/alertmanager", json=body, headers={"Authorization": ""}
            ).status_code
            == 401
        )
    with engine.connect() as conn:
        events = list_events(conn=conn, start=0, end=2e9)
        notes = get_incident(conn=conn, incident_id=incident["id"])["notes"]
        opened = [i for i in list_incidents(conn=conn, status="open") if i["sla"] == "feature sla"]
    assert {e["kind"] for e in events} == {"alert"} and len(events) == 4
    firing = [e for e in events if e["labels"]["alertname"] == "FeatureSlow"]
    assert abs(firing[0]["ts"] - 1_796_198_400.123) < 0.01
    assert firing[0]["summary"] == "FeatureSlow firing: feature service slow"
    assert [n["text"] for n in notes] == ["FeatureSlow firing: feature service slow"]
    assert len(opened) == 1


def test_incident_opened_by_alertmanager_is_announced_at_once(engine):
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="alertmanager", scope="write")
        upsert_sla(conn=conn, sla=SLA | {"name": "feature sla"})
    hook = {"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/hook"}
    settings = alert_settings(engine, [hook])  # no worker runs: only the incident path writes
    with TestClient(create_app(settings, engine=engine), base_url="http://127.0.0.1") as client:
        client.headers["Authorization"] = f"Bearer {token}"
        body = _am_body([_alert({"alertname": "Slow", "causeline_sla": "feature sla"})])
        resp = client.post("/api/v1/hooks/alertmanager", json=body)
    assert resp.status_code == 200, resp.text
    [opened] = resp.json()["opened"]
    with engine.connect() as conn:
        rows = conn.execute(
            select(AlertOutbox.event, AlertOutbox.channel, AlertOutbox.status).where(
                AlertOutbox.incident_id == opened
            )
        ).all()
    assert [tuple(r) for r in rows] == [("opened", "hook", "pending")]
