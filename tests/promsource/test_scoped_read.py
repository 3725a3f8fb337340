"""A fleet's TSDB behind the service: an incident's analysis asks it for its scope only.

A real Prometheus and a real VictoriaMetrics hold one model's latency and the GPU utilisation
of 41 hosts (the model runs on h1) and node CPU counters of 41 instances. With the analysis
bound below the fleet, the GPU rule (a plain selector) and the node CPU rule (an expression
by ``instance``, whose ``host`` the mapping rewrites from it) are both asked for h1 only,
instead of reading all of it.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

import numpy as np
import pytest

from correlator.bundle import Series
from correlator.incidents import snapshot
from correlator.promsource import make_source
from correlator.promsource.mapping import LabelRule, MetricRule
from correlator.promsource.narrow import narrowed
from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.topology import upsert_topology
from tests.helpers import M1_LATENCY_SLA
from tests.promsource import servers

STEP = 15.0
END = (time.time() // STEP) * STEP - 120
START = END - 3600
BREACH = END - 20 * 60
TOPOLOGY = {
    "nodes": [
        {"id": "model:m1", "kind": "model"},
        {"id": "instance:i-1", "kind": "instance"},
        {"id": "host:h1", "kind": "host"},
    ],
    "edges": [
        {"from": "instance:i-1", "to": "model:m1", "kind": "serves"},
        {"from": "instance:i-1", "to": "host:h1", "kind": "runs_on"},
    ],
}


def _fleet() -> list[Series]:
    ts = np.arange(START, END + 1, STEP)
    rng = np.random.default_rng(5)
    latency = np.where(ts < BREACH, 40.0, 180.0) + rng.normal(0, 2, ts.size)
    out = [Series("model_latency_p99_ms", {"model": "m1", "instance": "i-1"}, ts, latency)]
    for n in range(1, 42):
        hot = n == 1
        gpu = np.where(hot & (ts >= BREACH - 360), 95.0, 30.0) + rng.normal(0, 1, ts.size)
        labels = {"gpu": "0", "Hostname": f"h{n}", "UUID": f"GPU-{n}"}
        out.append(Series("DCGM_FI_DEV_GPU_UTIL", labels, ts, np.round(gpu, 2)))
        idle = np.cumsum(np.full(ts.size, 14.0))
        cpu = {"instance": f"h{n}:9100", "cpu": "0", "mode": "idle"}
        out.append(Series("node_cpu_seconds_total", cpu, ts, idle))
    return out


def test_a_rule_is_narrowed_to_the_scope_where_its_output_carries_the_label():
    query = 'DCGM_FI_DEV_GPU_UTIL{job!="x"}'
    kept = MetricRule("gpu_utilization_percent", query, keep=("Hostname",))
    assert narrowed(kept, {"host": {"h1"}}) is None  # Hostname is not mapped to host here
    mapped = MetricRule(kept.metric, query, labels=(LabelRule("host", "Hostname"),))
    assert narrowed(mapped, {"host": {"h1", "a.b"}}) == (
        'DCGM_FI_DEV_GPU_UTIL{job!="x", Hostname=~"a\\\\.b|h1"}'
    )
    cpu = MetricRule("node_cpu", "100 * (1 - avg by (instance) (rate(x[1m])))")
    assert narrowed(cpu, {"host": {"h1"}}) is None  # its output has no host label
    host = LabelRule("host", "instance", re.compile(r"\[?(.*?)\]?:[0-9]+"))
    assert narrowed(replace(cpu, labels=(host,)), {"host": {"h1"}}) == (
        "100 * (1 - avg by (instance)(rate("
        'x{instance=~"(?:\\\\[?(?:h1)\\\\]?:[0-9]+)|(?:h1)"}[1m])))'
    )
    folded = replace(cpu, query="100 * (1 - avg(rate(x[1m])))", labels=(host,))
    assert narrowed(folded, {"host": {"h1"}}) is None  # no instance left to ask for


@pytest.fixture(scope="module", params=["prometheus", "victoria-metrics"])
def server(request, tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp(request.param)
    with servers.holding(request.param, tmp, _fleet()) as url:
        yield url


@pytest.mark.integration
def test_the_analysis_asks_the_fleet_for_its_scope_only(server, tmp_path, monkeypatch):
    engine = make_engine(f"sqlite:///{tmp_path / 'c.db'}")
    upgrade(engine)
    with write_transaction(engine) as conn:
        upsert_topology(conn=conn, topology=TOPOLOGY)
    source = make_source(server)
    monkeypatch.setattr(snapshot, "MAX_SERIES", 10)  # the fleet holds 83 mapped series
    try:
        result = snapshot.analyze_window(engine, M1_LATENCY_SLA, at=BREACH, end=END, source=source)
    finally:
        source.close()
        engine.dispose()
    read = result["window"]["series_read"]
    assert read["read"] == 3 and not read["capped"], read  # the SLA's, h1's GPU and CPU
    assert not read["left_out"], read
    top = result["suspects"][0]
    assert (top["metric"], top["labels"]) == ("gpu_utilization_percent", {"gpu": "0", "host": "h1"})


def test_a_passthrough_is_asked_for_its_scope_by_every_label_a_series_may_carry():
    """A feature service's series carry service, not model: a model matcher alone misses them."""
    rule = MetricRule("feature_service_latency_p99_ms", "feature_service_latency_p99_ms")
    rule = replace(rule, keep_all=True)
    scope = {"model": {"m94"}, "service": {"features-1"}, "host": set()}
    assert narrowed(rule, scope) == (
        'feature_service_latency_p99_ms{model=~"m94"} or '
        'feature_service_latency_p99_ms{service=~"features\\\\-1"}'
    )
    many = {"model": {f"m{i}" for i in range(300)}, "service": {"features-1"}}
    assert narrowed(rule, many) is None  # read whole (and counted) rather than miss some


def test_a_selector_is_asked_of_the_server_on_the_labels_it_maps_as_they_are():
    """A board panel of four hosts' GPUs asks for those, not for the fleet's."""
    from correlator.promsource.narrow import pushed_down
    from correlator.selector import parse_selector

    dcgm = MetricRule(
        "gpu_utilization_percent",
        "DCGM_FI_DEV_GPU_UTIL",
        labels=(LabelRule("gpu", "gpu"), LabelRule("host", "Hostname")),
    )
    panel = parse_selector('gpu_utilization_percent{host=~"h1|h2",gpu!="7",job="x"}')
    assert pushed_down(dcgm, [panel]) == 'DCGM_FI_DEV_GPU_UTIL{Hostname=~"h1|h2", gpu!="7"}'
    one = parse_selector('gpu_utilization_percent{host="h3"}')
    assert pushed_down(dcgm, [panel, one]) == (
        'DCGM_FI_DEV_GPU_UTIL{Hostname=~"h1|h2", gpu!="7"} or DCGM_FI_DEV_GPU_UTIL{Hostname="h3"}'
    )
    unmapped = parse_selector('gpu_utilization_percent{UUID="GPU-1"}')  # not an output label
    assert pushed_down(dcgm, [panel, unmapped]) is None  # it would read the rule whole
    cpu = MetricRule("node_cpu", "100 * (1 - avg by (instance) (rate(x[1m])))")
    assert pushed_down(cpu, [one]) is None  # its output has no host label
    host = LabelRule("host", "instance", re.compile(r"\[?(.*?)\]?:[0-9]+"))
    cpu = replace(cpu, labels=(host,))
    assert pushed_down(cpu, [one]) == (
        "100 * (1 - avg by (instance)(rate("
        'x{instance=~"(?:\\\\[?(?:h3)\\\\]?:[0-9]+)|(?:h3)"}[1m])))'
    )
    assert pushed_down(cpu, [parse_selector('node_cpu{host!="h3"}')]) is None
