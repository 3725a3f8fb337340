import numpy as np
import pytest

from correlator.analysis import nodes, onset
from correlator.analysis.ranking import Placement, explained_by
from correlator.analysis.timeline import is_counter
from correlator.analysis.topology import Topology

TOPO = {
    "nodes": [{"id": n} for n in ("service:a", "service:b", "service:c", "service:d")],
    "edges": [
        {"from": "service:a", "to": "service:b", "kind": "calls"},
        {"from": "service:d", "to": "service:b", "kind": "calls"},
        {"from": "service:b", "to": "service:c", "kind": "calls"},
    ],
}


def test_widen_to_band_puts_the_baseline_tail_at_the_threshold():
    row = np.r_[np.zeros(96), np.full(4, 4.0)]  # idle, with rare bursts of 4
    ref = onset.reference(row[None, :], rel_floor=0.0, abs_floor=1e-9)
    assert ref.scale[0] == pytest.approx(0.25 * 4 * np.sqrt(0.04 * 0.96))  # a quarter std
    wide = onset.widen_to_band(ref, row[None, :], q=99.0, off=2.5)
    assert wide.scale[0] == pytest.approx(4.0 / 2.5)  # the 99th percentile is 4
    assert wide.lower[0] == pytest.approx(ref.scale[0])  # nothing below the median
    z = onset.robust_z(np.array([[4.0, 8.0, -2.0]]), wide)
    assert z[0].tolist() == pytest.approx([2.5, 5.0, -2.0 / ref.scale[0]])


def test_short_rising_gauge_is_not_a_counter():
    assert not is_counter("requests_sum", np.array([214, 222, 234, 267, 289], float))
    assert not is_counter("requests_sum", np.r_[np.zeros(20), 4.0, np.zeros(5)])
    assert is_counter("requests_sum", np.arange(0, 100, 7.0))
    assert is_counter("x_bucket", np.array([0, 10, 30, 35], float))


def test_metric_kind_by_name():
    assert nodes.metric_kind("latency_p99") == "latency"
    assert nodes.metric_kind("model_latency_p99_ms") == "latency"
    assert nodes.metric_kind("availability_avg") == "error"
    assert nodes.metric_kind("model_error_rate") == "error"
    assert nodes.metric_kind("requests_sum") == "traffic"
    assert nodes.metric_kind("model_requests_per_second") == "traffic"
    assert nodes.metric_kind("gpu_temperature_celsius") == "other"
    # the servicegraph connector's request count is traffic, its failures errors
    assert nodes.metric_kind("traces_service_graph_request:increase1m") == "traffic"
    assert nodes.metric_kind("traces_service_graph_request_failed_total") == "error"
    # a NIC's throughput is what callers send, on a host or a pod
    assert nodes.metric_kind("node_network_receive_bytes_per_second") == "traffic"
    assert nodes.metric_kind("network_transmit_bytes") == "traffic"
    assert nodes.metric_kind("node_network_receive_packets_total") == "traffic"
    # ... its errors and drops are not
    assert nodes.metric_kind("node_network_receive_errs_total") != "traffic"
    assert nodes.metric_kind("node_network_transmit_drop_total") != "traffic"


def test_a_callers_view_of_its_calls_is_client_side():
    names = [
        "pod_client_latency_p90_seconds",
        "span_duration_p90_seconds",
        "span_duration_p90_seconds",
        "cpu_usage_cores",
    ]
    labels = [{}, {"span_kind": "SPAN_KIND_CLIENT"}, {"span_kind": "SPAN_KIND_SERVER"}, {}]
    assert nodes.client_side(names, labels).tolist() == [True, True, False, False]
    # AWS X-Ray's client and remote nodes are their callers' view of a service or endpoint
    xray = [{"service": "search_client"}, {"service": "lb.example.com_remote"}, {"service": "db"}]
    assert nodes.client_side(["latency_avg"] * 3, xray).tolist() == [True, True, False]
    # a service mesh's client-side proxy: Istio's source reporter, Linkerd's outbound
    mesh = [{"reporter": "source"}, {"reporter": "destination"}, {"direction": "outbound"}]
    assert nodes.client_side(["request_duration_seconds"] * 3, mesh).tolist() == [True, False, True]


def test_traffic_of_a_called_node_is_weighted_down():
    up = Topology.from_dict(TOPO).callers
    assert up == {"service:b": {"service:a", "service:d"}, "service:c": {"service:b"}}
    w = nodes.traffic_weight(
        ["requests_sum", "requests_sum", "latency_avg"],
        ["service:a", "service:c", "service:c"],
        up,
        weight=0.3,
    )
    assert w.tolist() == [1.0, 0.3, 1.0]


def test_support_counts_the_callers_whose_anomalies_a_node_explains():
    callers = Topology.from_dict(TOPO).callers  # b is called by a and d, c by b
    primary = ["service:a", "service:b", "service:d", "service:c", "service:a", None]
    # a's and d's rows follow b's, b's follows c's; a's second row follows c, which a does
    # not call, and a row on no node follows b: neither counts.
    who = np.array([1, 3, 1, -1, 3, 1])
    shared = nodes.callers_explained(primary, who, callers)
    assert shared == {"service:b": 2, "service:c": 1}
    assert nodes.callers_explained(primary, np.full(6, -1), callers) == {}
    w = nodes.support_weight(["service:b", "service:a", None], shared, step=0.25, most=3)
    assert w.tolist() == [1.25, 1.0, 1.0]
    w = nodes.support_weight(["service:b"], {"service:b": 5}, step=0.25, most=3)
    assert w.tolist() == [1.5]


def _explain_kw(p: Placement, onsets: list[float], *, step: float = 60, **more) -> dict:
    """Return ``explained_by``'s arguments on TOPO but the candidates and severities."""
    return dict(
        onset_t=np.array(onsets),
        p=p,
        graph=Topology.from_dict(TOPO),
        step=step,
        ratio=0.5,
        **more,
    )


def test_a_much_weaker_anomaly_below_does_not_explain():
    p = Placement([["service:b"], ["service:c"]], ["service:b", "service:c"], np.array([1, 2]))
    kw = _explain_kw(
        p, [100.0, 100.0], propagates=np.ones(2, dtype=bool), demand=np.zeros(2, dtype=bool)
    )
    cand = np.array([0, 1])
    w, who = explained_by(cand, sev=np.array([1.0, 0.3]), **kw)  # weak below
    assert w[0] == 0.0 and who[0] == -1
    w, who = explained_by(cand, sev=np.array([1.0, 0.6]), **kw)  # strong below
    assert w[0] == pytest.approx(0.6) and who[0] == 1


def test_a_fault_below_explains_latency_and_errors_above_not_resources():
    names = ["latency_p99", "cpu_usage_percent", "latency_p99"]
    p = Placement(
        [["service:b"], ["service:b"], ["service:c"]],
        ["service:b", "service:b", "service:c"],
        np.array([1, 1, 2]),
    )
    kw = _explain_kw(p, [100.0] * 3, sev=np.array([0.8, 0.8, 0.8]), demand=nodes.demand(names))
    assert nodes.propagates(names).tolist() == [True, False, True]
    w, who = explained_by(np.array([0, 1, 2]), propagates=nodes.propagates(names), **kw)
    # c's latency explains b's latency; b's CPU is b's own.
    assert who.tolist() == [2, -1, -1] and w.tolist() == [1.0, 0.0, 0.0]
    w, who = explained_by(np.array([0, 1, 2]), propagates=np.ones(3, dtype=bool), **kw)
    assert who.tolist() == [2, 2, -1]


def test_demand_is_explained_by_demand_or_retries_never_by_a_resource():
    names = ["requests_per_second", "gpu_temperature_celsius", "error_rate", "requests_per_second"]
    p = Placement([["service:b"]] * 4, ["service:b"] * 4, np.array([1, 1, 1, 1]))
    kw = _explain_kw(
        p,
        [300.0, 100.0, 100.0, 100.0],  # the first row moved last
        step=10,
        propagates=nodes.propagates(names),
        demand=nodes.demand(names),
    )
    assert nodes.demand(names).tolist() == [True, False, False, True]
    sev = np.array([1.0, 0.9, 0.0, 0.0])  # only the GPU's temperature moved earlier
    w, who = explained_by(np.array([0, 1]), sev=sev, **kw)
    assert who[0] == -1 and w[0] == 0.0
    sev = np.array([1.0, 0.0, 0.8, 0.0])  # errors earlier: callers retry
    w, who = explained_by(np.array([0, 2]), sev=sev, **kw)
    assert who[0] == 2 and w[0] == pytest.approx(0.8)
    sev = np.array([1.0, 0.0, 0.0, 0.9])  # more demand arriving earlier
    w, who = explained_by(np.array([0, 3]), sev=sev, **kw)
    assert who[0] == 3
