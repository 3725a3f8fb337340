"""Past MAX_SERIES, an incident's analysis reads its scope: the SLA's series and what they
run on and call, nearest first, and says how many it read of how many."""

from __future__ import annotations

import numpy as np
import pytest

from collector.schema import Batch, SeriesBatch
from correlator.analysis import analyze
from correlator.bundle import read_bundle
from correlator.incidents import snapshot
from correlator.incidents.scope import scope_of
from correlator.store.bundles import import_bundle
from correlator.store.tsdb.ingest import store_batch
from tests.conftest import scenarios_dir

TOPOLOGY = {
    "nodes": [
        {"id": "model:m1", "kind": "model"},
        {"id": "instance:i-1", "kind": "instance"},
        {"id": "host:h1", "kind": "host"},
        {"id": "service:feat", "kind": "feature_service"},
        {"id": "service:far", "kind": "feature_service"},
    ],
    "edges": [
        {"from": "instance:i-1", "to": "model:m1", "kind": "serves"},
        {"from": "instance:i-1", "to": "host:h1", "kind": "runs_on"},
        {"from": "model:m1", "to": "service:feat", "kind": "calls"},
        {"from": "service:feat", "to": "service:far", "kind": "calls"},
    ],
}
SLA = {"name": "m1 p99", "metric": "model_latency_p99_ms", "labels": {"model": "m1"}}


def test_the_scope_ranks_by_hops_from_the_sla():
    scope = scope_of(SLA, [{"model": "m1", "instance": "i-1"}], TOPOLOGY)
    rank = scope.rank
    assert rank("model_latency_p99_ms", {"model": "m1", "instance": "i-1"}) == 0
    assert rank("model_qps", {"model": "m1", "instance": "i-1"}) == 1
    assert rank("gpu_utilization_percent", {"host": "h1", "gpu": "0"}) == 2  # i-1 runs on h1
    assert rank("feature_latency_ms", {"service": "feat"}) == 2  # m1 calls feat
    assert rank("feature_latency_ms", {"service": "far"}) == 3  # feat calls far
    assert rank("gpu_utilization_percent", {"host": "h9", "gpu": "0"}) is None
    assert rank("model_qps", {"model": "m7"}) is None


def test_a_store_past_the_bound_reads_the_incident_scope_and_finds_the_cause(engine, monkeypatch):
    """A real incident among a fleet of unrelated series: the same top suspect, fewer read."""
    bundle = read_bundle(scenarios_dir() / "public" / "06-gpu-thermal")
    direct = analyze(bundle)
    import_bundle(engine=engine, bundle=bundle)
    ts = np.arange(bundle.series[0].ts[0], bundle.series[0].ts[-1] + 1, 15.0)
    rng = np.random.default_rng(3)
    fleet = [
        SeriesBatch(name, {"host": f"other-{n}", "gpu": "0"}, ts.tolist(), values.tolist())
        for n in range(150)
        for name, values in (
            ("gpu_temperature_celsius", 60 + rng.normal(0, 1, ts.size)),
            ("gpu_utilization_percent", 50 + rng.normal(0, 5, ts.size)),
        )
    ]
    store_batch(engine=engine, batch=Batch(fleet))
    bound = len(bundle.series) + 20  # below the 300 fleet series: the scope decides
    monkeypatch.setattr(snapshot, "MAX_SERIES", bound)
    at = direct["breach_start"]
    result = snapshot.analyze_window(engine, bundle.sla, at=at, end=at + 900)
    scope = result["window"]["series_read"]
    assert scope["read"] <= bound and scope["in_scope"] <= len(bundle.series)
    assert scope["capped"] is False
    top = result["suspects"][0]
    assert (top.get("metric"), top.get("labels")) == (
        direct["suspects"][0].get("metric"),
        direct["suspects"][0].get("labels"),
    )
    monkeypatch.setattr(snapshot, "MAX_SERIES", 5)  # fewer than the scope: capped, said so
    small = snapshot.analyze_window(engine, bundle.sla, at=at, end=at + 900)
    small = small["window"]["series_read"]
    assert small["read"] == 5 and small["capped"] is True
    assert small["in_scope"] == scope["in_scope"]


@pytest.mark.parametrize("name", ["01-input-length-drift", "03-canary-deploy"])
def test_under_the_bound_nothing_changes(engine, name):
    bundle = read_bundle(scenarios_dir() / "public" / name)
    direct = analyze(bundle)
    import_bundle(engine=engine, bundle=bundle)
    at = direct["breach_start"]
    result = snapshot.analyze_window(engine, bundle.sla, at=at, end=at + 900)
    assert "series_read" not in result["window"]
    first, want = result["suspects"][0], direct["suspects"][0]
    assert (first.get("metric"), first.get("labels")) == (want.get("metric"), want.get("labels"))
