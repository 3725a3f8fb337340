"""The service pointed at a real Prometheus / VictoriaMetrics through settings, not the environment.

Each server holds a backfilled incident: the SLA metric (``model_latency_p99_ms``) and a
mapped GPU metric (``DCGM_FI_DEV_GPU_UTIL``) live only there, beside a raw metric the
mapping does not know; one anomalous series lives only in causeline's store.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient

from collector.schema import Batch, SeriesBatch
from correlator.alerts.outbox import list_outbox
from correlator.api.app import create_app
from correlator.bundle import Series
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.slas import upsert_sla
from correlator.store.tokens import create_token
from correlator.store.tsdb.ingest import store_batch
from tests.helpers import M1_LATENCY_SLA
from tests.promsource import servers

STEP = 15.0
END = (time.time() // STEP) * STEP - 120  # the last sample, two minutes ago
START = END - 2 * 3600
BREACH = END - 20 * 60  # latency jumps here; the SLA holds for 60 s
SLA = M1_LATENCY_SLA
ENV = (
    "CAUSELINE_PROMETHEUS_URL",
    "CAUSELINE_PROMETHEUS_MAPPING",
    "CAUSELINE_PROMETHEUS_STEP_SECONDS",
)


def _steps(base: float, jump: float, at: float, seed: int, noise: float):
    ts = np.arange(START, END + 1, STEP)
    rng = np.random.default_rng(seed)
    values = np.where(ts < at, base, jump) + rng.normal(0, noise, ts.size)
    return ts, np.round(values, 3)


def prometheus_series() -> list[Series]:
    """Return the series only the Prometheus-compatible server holds."""
    latency = _steps(40.0, 180.0, BREACH, 1, 2.0)
    gpu = _steps(30.0, 95.0, BREACH - 6 * 60, 2, 1.5)
    raw = _steps(0.9, 0.9, END, 3, 0.01)
    return [
        Series("model_latency_p99_ms", {"model": "m1", "instance": "i-1", "job": "srv"}, *latency),
        Series(
            "DCGM_FI_DEV_GPU_UTIL",
            {"gpu": "0", "Hostname": "h1", "UUID": "GPU-1", "job": "dcgm"},
            *gpu,
        ),
        Series("serving_cache_hit_ratio", {"instance": "i-1", "job": "srv"}, *raw),
    ]


@pytest.fixture(scope="module", params=["prometheus", "victoria-metrics"])
def server(request, tmp_path_factory) -> str:
    """Yield the URL of a real server holding ``prometheus_series()``."""
    tmp = tmp_path_factory.mktemp(request.param)
    with servers.holding(request.param, tmp, prometheus_series()) as url:
        yield url


@pytest.fixture
def service(server, tmp_path, monkeypatch):
    """Yield a client of ``create_app(ServiceSettings(prometheus_url=...))``, no env variables."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    url = f"sqlite:///{tmp_path / 'causeline.db'}"
    engine = make_engine(url)
    upgrade(engine)
    ts, values = _steps(0.05, 0.4, BREACH - 4 * 60, 4, 0.005)
    miss = SeriesBatch(
        name="model_cache_miss_rate",
        labels={"model": "m1", "instance": "i-1"},
        timestamps=ts.tolist(),
        values=values.tolist(),
    )
    store_batch(engine=engine, batch=Batch(series=[miss]))
    with write_transaction(engine) as conn:
        upsert_sla(conn=conn, sla=SLA)
        token = create_token(conn=conn, name="t")
    routes = {"channels": [{"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/x"}]}
    settings = ServiceSettings(
        database_url=url, prometheus_url=server, alert_routes_json=json.dumps(routes)
    )
    with TestClient(create_app(settings, engine=engine)) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        yield client
    engine.dispose()


def _names(suspects: list[dict]) -> dict[str, dict]:
    return {s["metric"]: s["labels"] for s in suspects if s.get("kind") == "series"}


def test_evaluator_opens_incident_from_prometheus_and_ranks_both_sources(service):
    report = service.post("/api/v1/evaluate", params={"at": END}).json()
    assert report["checked"] == 1 and len(report["opened"]) == 1, report
    incident = service.get(f"/api/v1/incidents/{report['opened'][0]}").json()
    assert BREACH <= incident["breach_start"] <= BREACH + 60 + 2 * STEP
    suspects = _names(incident["suspects"])
    assert suspects.get("gpu_utilization_percent") == {"gpu": "0", "host": "h1"}, suspects
    assert "model_cache_miss_rate" in suspects, suspects
    # The opened message carries the SLA's current value, read from Prometheus too.
    with service.app.state.engine.connect() as conn:
        rows = list_outbox(conn=conn, incident_id=incident["id"], payload=True)
    value_line = rows[0]["payload"]["value_line"]
    assert value_line.endswith("vs threshold 100 ms") and float(value_line.split()[0]) > 150, rows
    # The analysis route reads the same sources.
    got = service.post("/api/v1/analyze", json={"sla": SLA["name"], "at": BREACH + 60})
    assert got.status_code == 200, got.text
    found = _names(got.json()["suspects"])
    assert "gpu_utilization_percent" in found and "model_cache_miss_rate" in found, found


def test_board_queries_read_mapped_stored_and_raw_series(service, server):
    window = {"start": BREACH - 600, "end": END, "step": STEP}
    matches = [
        'model_latency_p99_ms{model="m1"}',  # mapped (passthrough): Prometheus
        'gpu_utilization_percent{host="h1"}',  # mapped (DCGM): Prometheus
        'model_cache_miss_rate{model="m1"}',  # unmapped, in the store
        'serving_cache_hit_ratio{instance="i-1"}',  # unmapped, not stored: Prometheus as is
    ]
    r = service.get("/api/v1/query_range", params={"match": matches, **window})
    assert r.status_code == 200, r.text
    got = {s["metric"]["__name__"]: s for s in r.json()["data"]["result"]}
    assert set(got) == {
        "model_latency_p99_ms",
        "gpu_utilization_percent",
        "model_cache_miss_rate",
        "serving_cache_hit_ratio",
    }
    assert got["gpu_utilization_percent"]["metric"] == {
        "__name__": "gpu_utilization_percent",
        "gpu": "0",
        "host": "h1",
    }
    assert got["serving_cache_hit_ratio"]["metric"]["job"] == "srv"  # raw: every label kept
    late = [float(v) for t, v in got["model_latency_p99_ms"]["values"] if t > BREACH + 60]
    assert late and min(late) > 150
    # /api/v1/series as the board uses it to find a model's instances.
    r = service.get("/api/v1/series", params={"match": 'model_latency_p99_ms{model="m1"}'})
    assert r.status_code == 200, r.text
    assert r.json()["data"] == [
        {"id": None, "name": "model_latency_p99_ms", "labels": {"model": "m1", "instance": "i-1"}}
    ]
    r = service.get("/api/v1/series", params={"match": "model_cache_miss_rate"})
    assert [s["labels"] for s in r.json()["data"]] == [{"model": "m1", "instance": "i-1"}]
    assert server in service.app.state.metric_source.url


def test_analyze_without_at_finds_the_latest_breach_in_prometheus(service):
    got = service.post("/api/v1/analyze", json={"sla": SLA["name"]})
    assert got.status_code == 200, got.text
    result = got.json()
    assert result["window"]["breach"] == "threshold"
    assert BREACH <= result["breach_start"] <= BREACH + 60 + 2 * STEP
    assert "gpu_utilization_percent" in _names(result["suspects"])
