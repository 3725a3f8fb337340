"""Call gaps: a CLIENT span's duration less its callee's SERVER span of the same RPC."""

import numpy as np

from correlator.analysis import callgap
from tests.analysis.conftest import make_series

P99 = "traces_span_metrics_duration_p99_seconds"


def _span(svc: str, kind: str, name: str, ts, values):
    labels = {"service": svc, "span_kind": f"SPAN_KIND_{kind}", "span_name": name}
    return make_series(P99, labels, np.asarray(ts, float), np.asarray(values, float))


def test_a_client_span_less_the_servers_span_at_the_times_both_have():
    client = _span("gw", "CLIENT", "shop.Cart/Get", [0, 60, 120], [0.5, 0.6, 0.7])
    server = _span("cart", "SERVER", "grpc.shop.Cart/Get", [60, 120, 180], [0.1, 0.2, 0.3])
    (gap,) = callgap.gaps([client, server])
    assert gap.name == "call_gap_duration_p99_seconds"
    assert gap.labels == {"client": "gw", "server": "cart", "span_name": "shop.Cart/Get"}
    assert gap.ts.tolist() == [60, 120]
    assert np.allclose(gap.values, [0.5, 0.5])


def test_names_served_by_several_services_or_not_rpcs_pair_nothing():
    ts, v = [0, 60], [0.1, 0.1]
    generic = [_span("gw", "CLIENT", "HTTP GET", ts, v), _span("cart", "SERVER", "HTTP GET", ts, v)]
    twice = [
        _span("gw", "CLIENT", "shop.Cart/Get", ts, v),
        _span("cart", "SERVER", "shop.Cart/Get", ts, v),
        _span("cart2", "SERVER", "/shop.Cart/Get", ts, v),
    ]
    own = [_span("gw", "CLIENT", "shop.Gw/Get", ts, v), _span("gw", "SERVER", "shop.Gw/Get", ts, v)]
    assert callgap.gaps(generic) == [] and callgap.gaps(twice) == [] and callgap.gaps(own) == []


def test_a_gap_is_the_callees_and_then_the_callers():
    labels = {"client": "gw", "server": "cart", "span_name": "shop.Cart/Get"}
    assert callgap.nodes(labels, ["service:cart"]) == ["service:cart", "service:gw"]
    # Only call gaps get a second node.
    assert callgap.is_gap(["call_gap_duration_p99_seconds", P99]).tolist() == [True, False]


def test_gaps_that_rose_alike_towards_several_callees_are_the_callers():
    names = ["call_gap_duration_p99_seconds"] * 4
    labels = [
        {"client": "gw", "server": "cart"},
        {"client": "gw", "server": "pay"},
        {"client": "gw", "server": "ship"},
        {"client": "web", "server": "cart"},
    ]
    # gw's gaps to cart and pay rose alike: all of gw's gaps are its own; web calls cart alone.
    gaps = callgap.is_gap(names)
    side = callgap.caller_side(gaps, names, labels, np.array([0.4, 0.3, 0.01, 0.4]), ratio=0.5)
    assert side.tolist() == [True, True, True, False]
    # One gap far above the caller's others singles out its callee.
    side = callgap.caller_side(gaps, names, labels, np.array([0.4, 0.1, 0.0, 0.4]), ratio=0.5)
    assert side.tolist() == [False, False, False, False]


def test_samples_a_few_seconds_apart_pair_and_other_labels_must_agree():
    ts = np.arange(0, 600, 60)
    ok = {"status_code": "STATUS_CODE_OK"}

    def span(svc, kind, shift, value, **extra):
        s = _span(svc, kind, "shop.Cart/Get", ts + shift, np.full(ts.size, value))
        s.labels.update(extra)
        return s

    series = [
        span("gw", "CLIENT", 0, 0.5, **ok),
        span("cart", "SERVER", 7, 0.1, **ok),  # another exporter, 7 s later
        span("gw", "CLIENT", 0, 0.9, status_code="STATUS_CODE_ERROR"),  # no server of its kind
    ]
    (gap,) = callgap.gaps(series)
    assert gap.labels == {"client": "gw", "server": "cart", "span_name": "shop.Cart/Get", **ok}
    assert gap.ts.tolist() == ts.tolist() and np.allclose(gap.values, 0.4)
    # A sparser server: only the client's times within half its 60 s step of one pair.
    sparse = _span("cart", "SERVER", "shop.Cart/Get", np.array([5.0, 320.0]), np.full(2, 0.1))
    (gap,) = callgap.gaps([span("gw", "CLIENT", 0, 0.5), sparse])
    assert gap.ts.tolist() == [0, 300]
