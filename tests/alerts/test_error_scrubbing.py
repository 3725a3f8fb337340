"""Outbox errors: a receiver echoing a header secret never gets any part of it stored or served."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from correlator.alerts.outbox import enqueue_incident_event
from correlator.alerts.worker import OutboxWorker
from correlator.api.app import create_app
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token
from tests.alerts.conftest import alert_settings, store_incident
from tests.alerts.receiver import Receiver

TOKEN = "s3cr3tTOKEN0123456789abcdefXYZW"
AUTH = f"Bearer {TOKEN}"
PREFIX = len('{"error": "')


def _echo(pad: int):
    """Answer 500 with the Authorization header placed ``pad`` characters into the error."""

    def check(path, query, headers, body):
        return 500, {"error": "x" * pad + headers.get("Authorization", "")}

    return check


def _pieces(secret: str, size: int = 8) -> list[str]:
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


@pytest.mark.parametrize("cut_at", [3, 16, 30])
def test_echoed_header_secret_is_scrubbed_before_the_cut(engine, cut_at):
    # http_error keeps 200 characters of the answer: put the cut ``cut_at`` chars into the token.
    pad = 200 - PREFIX - len("Bearer ") - cut_at
    receiver = Receiver(_echo(pad)).start()
    try:
        channel = {
            "name": "hook",
            "kind": "webhook",
            "url": receiver.url + "/hook",
            "headers": {"Authorization": AUTH},
        }
        settings = alert_settings(engine, [channel], alert_max_attempts=1)
        incident = store_incident(engine)
        with write_transaction(engine) as conn:
            enqueue_incident_event(conn=conn, incident=incident, event="opened", settings=settings)
            writer = create_token(conn=conn, name="ops", scope="write")
        report = OutboxWorker(engine, settings, holder="w1").run_once()
        assert report["failed"] == 1
        with TestClient(create_app(settings, engine=engine), base_url="http://127.0.0.1") as c:
            c.headers["Authorization"] = f"Bearer {writer}"
            rows = c.get("/api/v1/alerts/outbox", params={"status": "failed"}).json()
        served = json.dumps(rows)
        (row,) = rows
        assert row["last_error"].startswith("HTTP 500") and "xxxx****" in row["last_error"]
        assert TOKEN[:cut_at] not in served and "Bearer" not in served
        assert not [p for p in _pieces(TOKEN, 6) if p in served]
        with engine.connect() as conn:
            stored = conn.exec_driver_sql("SELECT last_error FROM alert_outbox").scalar_one()
        assert stored == row["last_error"]
    finally:
        receiver.stop()


def test_scrub_cut_masks_a_secret_cut_by_an_earlier_truncation():
    from correlator.alerts.masking import scrub_cut

    text = "answer: " + AUTH[:12]  # already cut (by the transport) before any scrubbing
    assert scrub_cut(text, 1000, AUTH, TOKEN) == "answer: ****"
    assert scrub_cut("k=" + TOKEN + " end", 10, TOKEN) == "k=**** end"
    assert scrub_cut("k=" + TOKEN[:9], 10, TOKEN) == "k=****"
    assert scrub_cut("nothing secret here", 1000, TOKEN) == "nothing secret here"
