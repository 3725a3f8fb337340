"""The PromQL API: prometheus-api-client reads it, errors come in Prometheus' shape."""

from __future__ import annotations

import math
import threading
import time
from datetime import UTC, datetime

import pytest
import uvicorn
from fastapi.testclient import TestClient
from prometheus_api_client import PrometheusConnect

from collector.schema import Batch, SeriesBatch
from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.tsdb.ingest import store_batch
from tests.helpers import free_port
from tests.promql import data


def _fill(engine) -> None:
    batch = Batch(
        [SeriesBatch(s.name, s.labels, s.ts.tolist(), s.values.tolist()) for s in data.series()]
    )
    store_batch(engine=engine, batch=batch)


@pytest.fixture
def client(engine):
    _fill(engine)
    settings = ServiceSettings(database_url=str(engine.url), read_max_series=10)
    with TestClient(create_app(settings, engine=engine)) as http:
        yield http


def test_prometheus_api_client_reads_ranges_and_instants(engine):
    _fill(engine)
    port = free_port()
    settings = ServiceSettings(database_url=str(engine.url), allowed_hosts="127.0.0.1")
    config = uvicorn.Config(create_app(settings, engine=engine), port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        prom = PrometheusConnect(url=f"http://127.0.0.1:{port}", disable_ssl=True)
        start = datetime.fromtimestamp(data.START + 600, UTC)
        end = datetime.fromtimestamp(data.START + 1200, UTC)
        found = prom.custom_query_range(
            "sum by (job) (rate(req_total[5m]))", start_time=start, end_time=end, step="60s"
        )
        by_job = {r["metric"]["job"]: r["values"] for r in found}
        assert sorted(by_job) == ["a", "b"] and len(by_job["b"]) == 11
        assert float(by_job["b"][-1][1]) == pytest.approx(7.25)
        assert float(by_job["a"][0][1]) == pytest.approx(2.5)  # before the reset, gap
        current = prom.custom_query('temp{job="a"}', params={"time": data.END})
        assert current[0]["metric"] == {"__name__": "temp", "job": "a", "inst": "1"}
        assert float(current[0]["value"][1]) == pytest.approx(20 + 5 * math.sin(12))
    finally:
        server.should_exit = True
        thread.join(10)


def test_an_unsupported_query_gets_prometheus_bad_data(client):
    params = {"query": "limitk(3, temp)", "start": data.START, "end": data.END, "step": "60s"}
    for resp in (
        client.get("/api/v1/query_range", params=params),
        client.post("/api/v1/query_range", data=params),
        client.get("/api/v1/query", params={"query": "temp[5m]"}),
    ):
        assert resp.status_code == 400, resp.text
        body = resp.json()
        assert set(body) == {"status", "errorType", "error"}
        assert body["status"] == "error" and body["errorType"] == "bad_data"
    assert (
        "aggregation limitk is not supported"
        in client.post("/api/v1/query_range", data=params).json()["error"]
    )


def test_parameters_bounds_and_the_old_form(client):
    base = {"query": "temp", "start": "2023-11-14T22:13:20Z", "end": 1_700_000_600}
    ok = client.get("/api/v1/query_range", params={**base, "step": "1m"})
    assert ok.status_code == 200 and ok.json()["data"]["resultType"] == "matrix"
    too_fine = client.get("/api/v1/query_range", params={**base, "step": "0.05"})
    assert too_fine.status_code == 400 and "11,000 points" in too_fine.json()["error"]
    zero = client.get("/api/v1/query_range", params={**base, "step": "0"})
    assert zero.status_code == 400 and "step" in zero.json()["error"]
    long = client.get("/api/v1/query", params={"query": "temp + " * 2000 + "1"})
    assert long.status_code == 400 and "longer than" in long.json()["error"]
    many = client.get("/api/v1/query", params={"query": '{job=~".+"}', "time": data.END})
    assert many.status_code == 422 and many.json()["errorType"] == "execution"
    assert "more than 10 series" in many.json()["error"]
    old = client.get(
        "/api/v1/query_range", params={"match": "temp", "start": data.START, "end": data.END}
    )
    assert old.status_code == 200 and len(old.json()["data"]["result"]) == 2
    assert "id" in old.json()["data"]["result"][0] or old.json()["data"]["result"][0]["metric"]


def test_series_and_labels_answer_prometheus_clients_in_prometheus_form(client):
    prom = client.get("/api/v1/series", params=[("match[]", 'temp{job="a"}')]).json()
    assert prom["status"] == "success"
    assert prom["data"] == [{"__name__": "temp", "job": "a", "inst": "1"}]
    ours = client.get("/api/v1/series", params={"match": 'temp{job="a"}'}).json()["data"]
    assert [(s["name"], s["labels"]) for s in ours] == [("temp", {"job": "a", "inst": "1"})]
    names = client.get("/api/v1/labels", params=[("match[]", "temp")]).json()["data"]
    assert names == sorted(names) and {"__name__", "job", "inst"} <= set(names)
    jobs = client.get("/api/v1/label/job/values", params=[("match[]", 'temp{job="a"}')]).json()
    assert jobs["data"] == ["a"]
    refused = client.get("/api/v1/series")
    assert refused.status_code == 422 and "selector" in refused.text


def test_an_evaluation_that_would_hold_too_many_points_is_refused(engine):
    _fill(engine)
    settings = ServiceSettings(database_url=str(engine.url), read_max_points=1000)
    with TestClient(create_app(settings, engine=engine)) as http:
        params = {"query": "temp", "start": data.START, "end": data.START + 6000, "step": "1s"}
        resp = http.get("/api/v1/query_range", params=params)
        assert resp.status_code == 422, resp.text
        body = resp.json()
        assert body["status"] == "error" and body["errorType"] == "execution"
        assert "would hold more than 10,000 points" in body["error"]
        params["step"] = "60s"  # the same selector at fewer steps is answered
        assert http.get("/api/v1/query_range", params=params).status_code == 200
