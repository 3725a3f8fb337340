"""One metric source, built from settings at the composition root and handed down (no network)."""

from __future__ import annotations

import ast
import gc
import sys
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from collector.schema import Batch, SeriesBatch
from correlator.api.app import create_app
from correlator.promsource.mapping import parse_mapping
from correlator.promsource.reader import PrometheusReader
from correlator.promsource.source import PrometheusSource
from correlator.selector import parse_selector
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine
from correlator.store.migrate import upgrade
from correlator.store.tsdb.ingest import store_batch

ROOT = Path(__file__).resolve().parents[2]
MAPPING = parse_mapping(
    {
        "metrics": {"gpu_utilization_percent": {"query": "DCGM_FI_DEV_GPU_UTIL", "keep": ["gpu"]}},
        "passthrough": ["model_latency_p99_ms"],
    }
)


class RecordingClient:
    """Answer every range query with one series labelled after the query; record the queries."""

    def __init__(self):
        self.queries: list[str] = []

    def custom_query_range(self, query, start_time, end_time, step):
        self.queries.append(query)
        s, e = start_time.timestamp(), end_time.timestamp()
        values = [[t, "1"] for t in np.arange(s, e + 1e-9, float(step))]
        labels = {"__name__": "x", "gpu": "0", "job": "dcgm", "instance": "i-1"}
        return [{"metric": labels, "values": values}]


@pytest.fixture
def app_and_client(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'c.db'}")
    upgrade(engine)
    stored = SeriesBatch(
        name="model_queue_length", labels={"instance": "i-1"}, timestamps=[100.0], values=[3.0]
    )
    store_batch(engine=engine, batch=Batch(series=[stored]))
    client = RecordingClient()
    source = PrometheusSource(PrometheusReader("http://prom.test", MAPPING, client=client))
    app = create_app(ServiceSettings(database_url=str(engine.url)), engine=engine, source=source)
    with TestClient(app) as http:
        yield http, client
    engine.dispose()


def test_query_range_reads_each_metric_from_where_it_lives(app_and_client):
    http, client = app_and_client
    matches = [
        'gpu_utilization_percent{gpu="0"}',  # mapped: through the mapping
        'gpu_utilization_percent{gpu="1"}',  # the same mapped metric: read once for both
        "model_queue_length",  # unmapped and stored: the store
        'serving_cache_hit_ratio{instance=~"i-.*"}',  # unmapped, not stored: Prometheus as is
        '{instance="i-1"}',  # no name: the store only
    ]
    r = http.get("/api/v1/query_range", params={"match": matches, "start": 0, "end": 200})
    assert r.status_code == 200, r.text
    assert client.queries == [  # one query for both of the mapped metric's selectors
        'DCGM_FI_DEV_GPU_UTIL{gpu="0"} or DCGM_FI_DEV_GPU_UTIL{gpu="1"}',
        'serving_cache_hit_ratio{instance=~"i-.*"}',
    ]
    got = sorted((s["metric"]["__name__"], len(s["metric"])) for s in r.json()["data"]["result"])
    assert got == [
        ("gpu_utilization_percent", 2),  # __name__ and gpu (keep)
        ("model_queue_length", 2),
        ("serving_cache_hit_ratio", 4),  # every raw label: gpu, job, instance
    ]
    r = http.get("/api/v1/series", params={"match": "serving_cache_hit_ratio"})
    assert r.json()["data"] == [
        {
            "id": None,
            "name": "serving_cache_hit_ratio",
            "labels": {"gpu": "0", "job": "dcgm", "instance": "i-1"},
        }
    ]


def test_worker_processes_rebuild_the_source_from_settings(tmp_path, monkeypatch):
    from uvicorn.importer import import_from_string

    from causeline.commands.serve import (
        APP_FACTORY,
        GC_YOUNG_OBJECTS,
        SWITCH_INTERVAL,
        worker_app,
        worker_environment,
    )

    settings = ServiceSettings(
        database_url=f"sqlite:///{tmp_path / 'w.db'}",
        prometheus_url="http://prom.test:9090",
        prometheus_step_seconds=5,
    )
    for name in ("CAUSELINE_PROMETHEUS_URL", "CAUSELINE_PROMETHEUS_STEP_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in worker_environment(settings).items():
        monkeypatch.setenv(name, value)
    assert import_from_string(APP_FACTORY) is worker_app  # uvicorn calls it in each worker
    before, thresholds = sys.getswitchinterval(), gc.get_threshold()
    app = worker_app()
    try:
        assert app.state.metric_source.url == "http://prom.test:9090"
        assert app.state.metric_source.step == 5
        assert before != pytest.approx(SWITCH_INTERVAL)  # pytest runs at Python's 5 ms
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
        assert thresholds[0] < GC_YOUNG_OBJECTS  # pytest runs at Python's 700
        assert gc.get_threshold() == (GC_YOUNG_OBJECTS, *thresholds[1:])
        assert gc.get_freeze_count() > 0
    finally:
        sys.setswitchinterval(before)
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        app.state.engine.dispose()
    assert (
        create_app(ServiceSettings(database_url="sqlite://", prometheus_url="")).state.metric_source
        is None
    )


def _run_time_nodes(tree: ast.AST):
    """Yield the nodes of a module that run: not those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            yield from (n for child in node.orelse for n in ast.walk(child))
            continue
        yield node
        yield from _run_time_nodes(node)


def test_layers_below_the_api_take_the_source_and_never_read_it_from_the_environment():
    # The settings' type may be named for the type checker; the layers never import them.
    banned_imports = ("correlator.settings", "correlator.promsource.source")
    typed = 0
    for folder in ("store", "incidents", "alerts", "analysis", "receivers"):
        paths = sorted((ROOT / "correlator" / folder).rglob("*.py"))
        assert paths, folder  # a renamed folder must not leave this check empty
        for path in paths:
            typed += "ServiceSettings" in path.read_text()
            for node in _run_time_nodes(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    assert "CAUSELINE_PROMETHEUS" not in node.value, path
                elif isinstance(node, ast.Attribute):
                    assert not node.attr.startswith("prometheus_"), (path, node.attr)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    assert node.module not in banned_imports, (path, node.module)
    assert typed, "no layer names the settings' type: the TYPE_CHECKING skip is untested"


@pytest.mark.parametrize(
    "text", ["x", 'x{a="b\\"c"}', '{a=~"i-.*",b!=""}', 'x{a="c:\\\\d",b!~"q"}']
)
def test_selector_promql_parses_back_to_the_same_selector(text):
    selector = parse_selector(text)
    assert parse_selector(selector.promql()) == selector
