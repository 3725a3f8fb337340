"""The outbox on SQLite and PostgreSQL: written once, delivered once, retried, silenced, limited."""

from __future__ import annotations

import threading
import time

from fastapi.testclient import TestClient
from sqlalchemy import select

from correlator.alerts.outbox import enqueue_incident_event, list_outbox
from correlator.alerts.worker import OutboxWorker
from correlator.api.app import create_app
from correlator.store.engine import make_engine, write_transaction
from correlator.store.incidents import get_incident, resolve_incident
from correlator.store.tables import AlertOutbox
from correlator.store.tokens import create_token
from tests.alerts.conftest import alert_settings, store_incident
from tests.alerts.receiver import Receiver
from tests.alerts.samples import SLA, T0

SECRET_PATH = "/hook/T0SECRET/B0SECRET/XXXXSECRETXXXX"


def _hook(receiver, name="hook", kind="webhook", **extra) -> dict:
    return {"name": name, "kind": kind, "url": receiver.url + SECRET_PATH, **extra}


def _enqueue(engine, settings, incident, event="opened", now=None) -> int:
    with write_transaction(engine) as conn:
        return enqueue_incident_event(
            conn=conn, incident=incident, event=event, settings=settings, now=now
        )


def _rows(engine) -> list[AlertOutbox]:
    with engine.connect() as conn:
        return list(conn.execute(select(AlertOutbox).order_by(AlertOutbox.id)).all())


def test_enqueue_routes_and_deduplicates(engine, receiver):
    settings = alert_settings(
        engine,
        [_hook(receiver), _hook(receiver, "algo-slack", "slack"), _hook(receiver, "wc", "wecom")],
        routes=[
            {"model": "click_rank_v3", "team": "algo", "channels": ["algo-slack", "hook"]},
            {"team": "infra", "channels": ["wc"]},
        ],
        default=[],
    )
    incident = store_incident(engine)
    assert _enqueue(engine, settings, incident) == 2
    assert _enqueue(engine, settings, incident) == 0  # the same event twice: nothing new
    assert _enqueue(engine, settings, incident, "updated") == 0  # same top suspect
    moved = incident | {"suspects": incident["suspects"][1:]}
    assert _enqueue(engine, settings, moved, "updated") == 2
    assert _enqueue(engine, settings, moved, "updated") == 0
    assert _enqueue(engine, settings, moved | {"status": "resolved"}, "resolved") == 2
    assert {r.channel for r in _rows(engine)} == {"algo-slack", "hook"}
    assert [r.event for r in _rows(engine)][::2] == ["opened", "updated", "resolved"]


def test_delivered_once_after_receiver_comes_back_across_restart(engine):
    receiver = Receiver()  # not listening yet: connections are refused
    url = engine.url.render_as_string(hide_password=False)
    settings = alert_settings(
        engine,
        [_hook(receiver)],
        alert_worker_enabled=True,
        alert_worker_interval_seconds=0.1,
        alert_retry_base_seconds=0.3,
        alert_retry_cap_seconds=0.5,
        alert_max_attempts=1000,
    )
    incident = store_incident(engine)
    app1 = create_app(settings, engine=make_engine(url))
    with TestClient(app1):
        assert _enqueue(engine, settings, incident) == 1
        deadline = time.monotonic() + 20
        while _rows(engine)[0].attempts < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    row = _rows(engine)[0]
    assert row.status == "pending" and row.attempts >= 2 and "SECRET" not in row.last_error
    receiver.start()  # back up; a new service process on the same database
    try:
        app2 = create_app(settings, engine=make_engine(url))
        with TestClient(app2):
            receiver.wait_for(lambda p: len(p) >= 1)
            time.sleep(1.0)  # several more passes: nothing is sent again
        assert len(receiver.posts) == 1
        assert _rows(engine)[0].status == "sent"
    finally:
        receiver.stop()


def test_gives_up_after_the_cap_and_shows_it(engine):
    receiver = Receiver(lambda *a: (500, {"error": "down"})).start()
    try:
        settings = alert_settings(engine, [_hook(receiver)], alert_max_attempts=3)
        _enqueue(engine, settings, store_incident(engine))
        worker = OutboxWorker(engine, settings, holder="w1")
        now = time.time()
        reports = [worker.run_once(now + k * 1000) for k in range(4)]
        assert [r["retry"] for r in reports] == [1, 1, 0, 0]
        assert reports[2]["failed"] == 1 and len(receiver.posts) == 0
        with write_transaction(engine) as conn:
            token = create_token(conn=conn, name="ops")
        with TestClient(create_app(settings, engine=engine)) as client:
            auth = {"Authorization": f"Bearer {token}"}
            failed = client.get(
                "/api/v1/alerts/outbox", params={"status": "failed"}, headers=auth
            ).json()
            assert len(failed) == 1 and failed[0]["attempts"] == 3
            assert failed[0]["last_error"].startswith("HTTP 500")
            channels = client.get("/api/v1/alerts/channels").text
            assert "SECRET" not in channels and "/****" in channels
            resp = client.post(f"/api/v1/alerts/outbox/{failed[0]['id']}/retry", headers=auth)
            assert resp.status_code == 200 and _rows(engine)[0].status == "pending"
        # Delays grow exponentially, with jitter, up to the cap.
        waits = [worker.backoff(n) for n in range(1, 12)]
        assert waits[0] <= 2.0 and waits[3] >= 8.0 and max(waits) <= 300.0
    finally:
        receiver.stop()


def test_two_workers_never_send_one_twice(engine, receiver, monkeypatch):
    monkeypatch.setattr("correlator.alerts.worker.BATCH", 3)  # many small, racing claims
    settings = alert_settings(engine, [_hook(receiver, rate_per_minute=1000)])
    for i in range(20):
        incident = store_incident(engine, sla=SLA | {"name": f"sla {i}"})
        _enqueue(engine, settings, incident)
    workers = [
        OutboxWorker(
            make_engine(engine.url.render_as_string(hide_password=False)), settings, holder=f"w{i}"
        )
        for i in range(2)
    ]
    sent = {w.holder: 0 for w in workers}

    def drain(w):
        for _ in range(20):
            sent[w.holder] += w.run_once()["sent"]

    threads = [threading.Thread(target=drain, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [p["headers"]["X-Causeline-Delivery"] for p in receiver.posts]
    assert len(ids) == 20 and len(set(ids)) == 20 and sum(sent.values()) == 20
    assert all(r.status == "sent" for r in _rows(engine))
    for w in workers:
        w.engine.dispose()


def test_silence_suppresses_and_its_expiry_restores(engine, receiver):
    settings = alert_settings(engine, [_hook(receiver)])
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="ops")
    client = TestClient(create_app(settings, engine=engine))
    client.headers["Authorization"] = f"Bearer {token}"
    resp = client.post(
        "/api/v1/alerts/silences",
        json={"matchers": {"model": "click_rank_v3"}, "duration_seconds": 60, "comment": "maint"},
    )
    assert resp.status_code == 201, resp.text
    now = time.time()
    incident = store_incident(engine)
    _enqueue(engine, settings, incident, now=now)
    worker = OutboxWorker(engine, settings, holder="w1")
    assert worker.run_once(now + 1)["sent"] == 0
    assert _rows(engine)[0].status == "silenced" and receiver.posts == []
    assert client.get("/api/v1/alerts/silences").json()[0]["state"] == "active"
    # Another SLA is not silenced.
    other = store_incident(
        engine, sla=SLA | {"name": "other", "labels": {"model": "m2"}, "model": "m2"}
    )
    _enqueue(engine, settings, other, now=now)
    assert worker.run_once(now + 2)["sent"] == 1
    # The silence ends while the incident is still open: the message goes out.
    assert worker.run_once(now + 61)["sent"] == 1
    assert len(receiver.posts) == 2
    # A silence made after enqueue but before sending holds the message too.
    third = store_incident(engine, sla=SLA | {"name": "third", "model": "m3", "labels": {}})
    _enqueue(engine, settings, third, now=time.time())
    resp = client.post(
        "/api/v1/alerts/silences", json={"matchers": {"sla": "third"}, "duration_seconds": 30}
    )
    assert worker.run_once()["silenced"] == 1
    assert client.delete(f"/api/v1/alerts/silences/{resp.json()['id']}").status_code == 204
    assert worker.run_once(time.time() + 1)["sent"] == 1
    client.close()


def test_rate_limit_per_channel(engine, receiver):
    settings = alert_settings(engine, [_hook(receiver, rate_per_minute=3)])
    for i in range(5):
        _enqueue(engine, settings, store_incident(engine, sla=SLA | {"name": f"s{i}"}))
    worker = OutboxWorker(engine, settings, holder="w1")
    report = worker.run_once()
    assert report["sent"] == 3 and report["deferred"] == 2
    assert worker.run_once(time.time() + 61)["sent"] == 2


def test_alertmanager_alert_resent_while_firing_until_resolved(engine, receiver):
    settings = alert_settings(
        engine, [{"name": "am", "kind": "alertmanager", "url": receiver.url, "resend_seconds": 30}]
    )
    incident = store_incident(engine)
    _enqueue(engine, settings, incident)
    worker = OutboxWorker(engine, settings, holder="w1")
    now = time.time()
    assert worker.run_once(now)["sent"] == 1
    assert worker.run_once(now + 10)["refreshed"] == 0
    assert worker.run_once(now + 40)["refreshed"] == 1
    assert worker.run_once(now + 80)["refreshed"] == 1
    with write_transaction(engine) as conn:
        resolve_incident(conn=conn, incident_id=incident["id"], now=now + 90, by="t")
        resolved = get_incident(conn=conn, incident_id=incident["id"])
        enqueue_incident_event(
            conn=conn, incident=resolved, event="resolved", settings=settings, now=now + 90
        )
    assert worker.run_once(now + 130) == {
        "sent": 1,
        "retry": 0,
        "failed": 0,
        "silenced": 0,
        "deferred": 0,
        "refreshed": 0,
        "swept": 0,
        "annotated": 0,
    }
    alerts = [p["json"][0] for p in receiver.posts]
    assert all(p["path"] == "/api/v2/alerts" for p in receiver.posts)
    assert len({tuple(sorted(a["labels"].items())) for a in alerts}) == 1  # one alert
    assert "endsAt" in alerts[-1] and alerts[-1]["annotations"]["summary"].startswith(
        "[CRITICAL] Resolved"
    )
    with engine.connect() as conn:
        assert len(list_outbox(conn=conn)) == 2


def test_sweep_announces_an_incident_left_without_a_message(engine, receiver):
    settings = alert_settings(engine, [_hook(receiver)])
    store_incident(engine, at=time.time() - 120)  # opened, but its message never enqueued
    report = OutboxWorker(engine, settings, holder="w").run_once()
    assert report["swept"] == 1 and report["sent"] == 1
    assert receiver.posts[0]["json"]["event"] == "opened"


def test_broken_routes_never_roll_back_the_incident_change(engine, tmp_path):
    bad = tmp_path / "alerts.yaml"
    bad.write_text("channels: [\n")
    settings = alert_settings(engine, [], alert_routes_file=str(bad))
    incident = store_incident(engine)
    with write_transaction(engine) as conn:
        resolve_incident(conn=conn, incident_id=incident["id"], now=T0 + 60, by="t")
        written = enqueue_incident_event(
            conn=conn, incident=incident, event="resolved", settings=settings
        )
    assert written == 0
    with engine.connect() as conn:
        assert get_incident(conn=conn, incident_id=incident["id"])["status"] == "resolved"
    assert OutboxWorker(engine, settings, holder="w").run_once()["sent"] == 0


def test_changes_done_become_grafana_annotations_once_whichever_way_they_came(engine):
    from correlator.store.changes import add_change, update_change
    from tests.alerts import platforms

    receiver = Receiver(platforms.grafana("glsa_t")).start()
    try:
        grafana = {"name": "g", "kind": "grafana", "url": receiver.url, "secret": "glsa_t"}
        settings = alert_settings(engine, [grafana])
        now = time.time()
        with write_transaction(engine) as conn:
            done = {"id": "c-1", "kind": "deploy", "owner": "algo", "ts": now - 60}
            add_change(conn=conn, change=done | {"target": "model:m", "summary": "v2"}, now=now)
            planned = {"id": "c-2", "kind": "config", "owner": "infra", "planned_ts": now + 60}
            add_change(conn=conn, change=planned, now=now)
            old = {"id": "c-0", "kind": "image", "owner": "infra", "ts": now - 3 * 86400}
            add_change(conn=conn, change=old, now=now)
        worker = OutboxWorker(engine, settings, holder="w")
        report = worker.run_once(now)
        assert report["annotated"] == 1 and report["sent"] == 1
        (post,) = receiver.posts
        assert post["path"] == "/api/annotations" and post["json"]["time"] == round(
            (now - 60) * 1000
        )
        assert {"causeline", "change", "change:c-1", "kind:deploy", "model:m"} <= set(
            post["json"]["tags"]
        )
        assert "https://causeline.example/changes" in post["json"]["text"]
        assert worker.run_once(now + 31)["annotated"] == 0  # once per change and channel
        with write_transaction(engine) as conn:  # the planned one is carried out
            update_change(conn=conn, change_id="c-2", fields={"ts": now + 61})
        assert worker.run_once(now + 62)["annotated"] == 1
        assert [p["json"]["tags"][2] for p in receiver.posts] == ["change:c-1", "change:c-2"]
    finally:
        receiver.stop()
