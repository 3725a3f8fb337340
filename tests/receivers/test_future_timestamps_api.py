"""Samples stamped far ahead of the service's clock: refused on every push route, nothing stored."""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token
from tests.helpers import count_rows
from tests.receivers.wire import RW_HEADERS, snappy, write_request

DAY = 86_400.0
REASON = "is later than the latest this service accepts"


def _ingest(client, stamps: list[float], events: list[dict] | None = None):
    series = [{"name": "gpu_temp_celsius", "labels": {"host": "h1"}, "timestamps": stamps}]
    series[0]["values"] = [70.0] * len(stamps)
    return client.post("/api/v1/ingest", json={"series": series, "events": events or []})


def _remote_write(client, stamps: list[float]):
    labels = {"__name__": "gpu_temp_celsius", "host": "h2"}
    request = write_request([(labels, [(70.0, round(t * 1000)) for t in stamps])])
    return client.post("/api/v1/write", content=snappy(request), headers=RW_HEADERS)


def _otlp(client, stamps: list[float]):
    points = [{"timeUnixNano": str(round(t * 1e9)), "asDouble": 70.0} for t in stamps]
    metric = {"name": "gpu.temp", "unit": "Cel", "gauge": {"dataPoints": points}}
    doc = {"resourceMetrics": [{"resource": {}, "scopeMetrics": [{"metrics": [metric]}]}]}
    return client.post(
        "/v1/metrics", content=json.dumps(doc), headers={"Content-Type": "application/json"}
    )


def test_a_sample_a_day_and_more_ahead_is_refused_on_every_push_route(client):
    now = time.time()
    stamps = [now - 60, now + DAY + 600]  # the second: a clock set a day ahead

    resp = _ingest(client, stamps)
    assert resp.status_code == 422, resp.text
    detail = resp.json()["detail"]
    assert detail["field"] == "series[0].timestamps[1]"
    assert REASON in detail["reason"] and "check the sender's clock" in detail["reason"]

    event = {"id": "xid-1", "ts": now + 2 * DAY, "kind": "gpu_xid", "summary": "Xid 79"}
    resp = _ingest(client, [now - 60], [event])
    assert resp.status_code == 422 and resp.json()["detail"]["field"] == "events[0].ts"

    resp = _remote_write(client, stamps)
    assert resp.status_code == 400, resp.text
    detail = resp.json()["detail"]
    assert detail["field"] == "timeseries[0].timestamps[1]" and REASON in detail["reason"]

    resp = _otlp(client, stamps)
    assert resp.status_code == 400, resp.text
    assert REASON in resp.json()["message"]

    assert count_rows(client.engine) == 0 and count_rows(client.engine, "events") == 0


def test_a_clock_a_little_ahead_is_accepted_on_every_push_route(client):
    stamps = [time.time() + 3600, time.time() + 3615]  # an hour ahead: inside the day
    assert _ingest(client, stamps).json()["inserted"] == 2
    assert _remote_write(client, stamps).json()["inserted"] == 2
    assert _otlp(client, stamps).status_code == 200
    assert count_rows(client.engine) == 6


def _client(engine, **settings) -> TestClient:
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="clock")
    app = create_app(ServiceSettings(database_url=str(engine.url), **settings), engine=engine)
    client = TestClient(app, base_url="http://127.0.0.1")
    client.headers["Authorization"] = f"Bearer {token}"
    return client


@pytest.mark.parametrize(("ahead", "stored"), [(None, 1), (0.0, 1), (600.0, 0)])
def test_the_bound_is_a_setting(engine, ahead, stored):
    with _client(engine, max_future_seconds=ahead) as client:
        stamp = time.time() + 3600 if ahead else 4_102_444_800.0  # an hour ahead; 2100
        resp = _ingest(client, [stamp])
        assert resp.status_code == (200 if stored else 422), resp.text
    assert count_rows(engine) == stored
