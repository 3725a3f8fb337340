"""Panels for any metric names: units from names, grouping, selectors, a person's panels."""

from __future__ import annotations

import numpy as np
import pytest

from correlator.selector import parse_selector
from dashboard import selectors, urlquery
from dashboard.focus import pick_incident, sla_concerns, suspect_wants
from dashboard.kept_panels import add, forget, keep_key, restore
from dashboard.pages.board import view_url
from dashboard.panels import PANELS, panel_selectors
from dashboard.series_panels import (
    Want,
    custom_panel,
    family_of,
    group_panels,
    node_of,
    panel_param,
    read_panel_param,
    variant_of,
)
from dashboard.timeparse import fmt, parse_when
from dashboard.units import as_drawn, byte_scale, counter_rate, unit_of


@pytest.mark.parametrize(
    ("metric", "label", "rate", "factor"),
    [
        ("gpu_memory_used_bytes", "B", False, 1.0),
        ("node_network_receive_bytes_per_second", "B/s", False, 1.0),
        ("network_transmit_bytes_total", "B/s", True, 1.0),
        ("http_requests_total", "/s", True, 1.0),
        ("process_cpu_seconds_total", "s/s", True, 1.0),
        ("service_latency_p90_seconds", "s", False, 1.0),
        ("model_latency_p99_ms", "ms", False, 1.0),
        ("cpu_usage_rate_percent", "%", False, 1.0),
        ("cache_hit_ratio", "ratio", False, 1.0),
        ("memory_usage_mebibytes", "B", False, 2.0**20),
        ("latency_avg", "", False, 1.0),
        ("", "", False, 1.0),
    ],
)
def test_unit_is_read_from_the_name(metric, label, rate, factor):
    unit = unit_of(metric)
    assert (unit.label, unit.rate, unit.factor) == (label, rate, factor)


def test_bytes_scale_to_binary_prefixes():
    assert byte_scale(500, "B") == (1.0, "B")
    assert byte_scale(2048, "B") == (1024.0, "KiB")
    assert byte_scale(5 * 2**20, "B/s") == (2.0**20, "MiB/s")
    assert byte_scale(3 * 2**30, "B") == (2.0**30, "GiB")
    assert byte_scale(5e9, "ms") == (1.0, "ms")


def test_counters_are_drawn_as_per_second_rates_across_resets():
    ts = np.array([0.0, 10.0, 20.0, 30.0, 40.0])
    ts2, rate = counter_rate(ts, np.array([0.0, 10.0, 20.0, 5.0, 15.0]))
    assert ts2.tolist() == [10.0, 20.0, 30.0, 40.0]
    assert rate.tolist() == [1.0, 1.0, 0.5, 1.0]  # the drop is a restart from zero
    _, mib = as_drawn(ts, np.array([1.0, 2.0, 3.0, 4.0, 5.0]), unit_of("x_mebibytes"))
    assert mib[0] == 2.0**20
    assert counter_rate(ts[:1], ts[:1])[0].size == 0


def test_families_variants_and_nodes():
    assert family_of("latency_avg") == family_of("latency_p99") == "latency"
    assert family_of("pod_server_latency_p95_seconds") == "pod_server_latency_seconds"
    assert family_of("node_network_receive_bytes") == family_of("node_network_transmit_bytes")
    assert family_of("max_connections") == "max_connections"  # the head part stays
    assert variant_of("latency_p99") == "p99" and variant_of("requests_sum") == ""
    assert node_of({"pod": "cart-1", "service": "cart"}) == "service=cart"
    assert node_of({"host": "h1", "gpu": "0"}) == "host=h1"
    assert node_of({"model": "m", "instance": "i-1"}) == "instance=i-1"
    assert node_of({"le": "1"}) == ""


def test_wants_group_by_family_and_node_in_order():
    wants = [
        Want("sla", "latency_avg", {"service": "PetSite"}, ["PetSite SLO"]),
        Want("suspect", "latency_avg", {"service": "DynamoDB"}, ["#1"]),
        Want("suspect", "latency_p99", {"service": "PetSite"}, ["#2"]),
        Want("suspect", "memory_usage_mebibytes", {"service": "cart", "pod": "c-1"}, ["#3"]),
        Want("suspect", "latency_p95", {"service": "DynamoDB"}, ["#4"]),
    ]
    panels = group_panels(wants)
    assert [p.title for p in panels] == [
        "PetSite SLO #2 · latency · service=PetSite",
        "#1 #4 · latency · service=DynamoDB",
        "#3 · memory_usage_mebibytes · service=cart",
    ]
    first, second, third = panels
    assert first.board == "sla" and first.scope == "fixed"
    assert first.selectors == ('latency_avg{service="PetSite"}', 'latency_p99{service="PetSite"}')
    assert second.metrics == ("latency_avg", "latency_p95")
    assert (third.unit, third.factor) == ("B", 2.0**20)
    assert len({p.key for p in panels}) == 3
    assert panel_selectors(first, model=None, instances=[], hosts=[], gpus=[]) == list(
        first.selectors
    )


def test_selectors_escape_values_and_regex_metacharacters():
    text = selectors.selector("m", {"service": ["a.b", 'c"(d'], "model": [None]})
    assert text == 'm{service=~"a\\\\.b|c\\"\\\\(d"}'
    parsed = parse_selector(text)
    assert parsed.matches("m", {"service": "a.b"}) and parsed.matches("m", {"service": 'c"(d'})
    assert not parsed.matches("m", {"service": "aXb"})
    exact = selectors.exact("latency_avg", {"service": 'Pet"Site\\'})
    assert parse_selector(exact).matches("latency_avg", {"service": 'Pet"Site\\'})
    assert selectors.read(exact) == ("latency_avg", {"service": 'Pet"Site\\'})
    assert selectors.read('{service="x", pod!="y"}') == (None, {"service": "x"})
    for bad in ("", "bad{{", "{}", 'm{a="b"', "m x", "x" * 2000):
        with pytest.raises(ValueError):
            selectors.read(bad)


def test_built_in_panels_never_ask_for_the_whole_fleet():
    qps, restarts = PANELS[0], PANELS[-1]
    assert panel_selectors(qps, model=None, instances=[], hosts=[], gpus=[]) == []
    assert panel_selectors(restarts, model="m", instances=[], hosts=[], gpus=[]) == []
    assert panel_selectors(qps, model="a|b", instances=["i.1"], hosts=[], gpus=[]) == [
        'model_requests_per_second{instance="i.1",model="a|b"}'
    ]


def test_custom_panels_in_the_url():
    text = 'cpu_usage_rate_percent{service="cart"}'
    assert panel_param("CPU | of cart", text) == f"CPU of cart|{text}"
    assert read_panel_param(f"CPU of cart|{text}") == ("CPU of cart", text)
    assert read_panel_param('m{a=~"x|y"}') == ("", 'm{a=~"x|y"}')
    assert read_panel_param("name|bad{{") is None and read_panel_param("junk junk") is None
    panel = custom_panel(0, "", "net_bytes_total")
    assert (panel.title, panel.unit, panel.rate, panel.board) == (
        "net_bytes_total",
        "B/s",
        True,
        "custom",
    )
    with pytest.raises(ValueError):
        custom_panel(1, "x", "not a selector")


def test_kept_panels_follow_the_model_or_service():
    assert keep_key("m", ["s"]) == "model:m" and keep_key(None, ["s"]) == "service:s"
    assert keep_key(None, []) == ""
    shown, kept, said = add([], {}, "service:s", "mine", 'latency_avg{service="s"}', True)
    assert shown == ['mine|latency_avg{service="s"}'] and kept == {"service:s": shown}
    assert "kept for service s" in said
    same, _, said = add(shown, kept, "service:s", "mine", 'latency_avg{service="s"}', True)
    assert same == shown and "already" in said
    _, _, said = add([], {}, "", "", "bad{{", True)
    assert "cannot read" in said
    assert restore(["url|x"], kept, "service:s") == ["url|x", *shown]
    assert restore(shown, kept, "model:other") == []  # kept for another service: not here
    assert forget(kept, "service:s", []) == {"service:s": []}
    assert forget(kept, "service:s", shown) is None


def test_focus_on_the_slas_and_incident_of_the_view():
    sla = {"name": "s", "metric": "latency_avg", "labels": {"service": "PetSite"}}
    assert sla_concerns(sla, None, []) and sla_concerns(sla, None, ["PetSite"])
    assert not sla_concerns(sla, "PetSite", []) and not sla_concerns(sla, None, ["other"])
    incidents = [
        {"id": 1, "sla": "s", "status": "resolved", "breach_start": 100, "breach_end": 200},
        {"id": 2, "sla": "s", "status": "open", "breach_start": 150},
        {"id": 3, "sla": "s", "status": "open", "breach_start": 5000},
        {"id": 4, "sla": "t", "status": "open", "breach_start": 150},
    ]
    assert pick_incident(incidents, {"s"}, 0, 1000)["id"] == 2
    assert pick_incident(incidents, {"s"}, 0, 120)["id"] == 1
    assert pick_incident(incidents, {"x"}, 0, 1000) is None
    suspects = [
        {"rank": 1, "kind": "change", "id": "chg-1"},
        {"rank": 2, "kind": "series", "metric": "latency_p99", "labels": {"service": "a"}},
        {"rank": 3, "kind": "series", "metric": None},
        {"rank": 4, "kind": "series", "metric": "x", "labels": {"service": "b"}},
    ]
    wants = suspect_wants({"suspects": suspects}, limit=1)
    assert [(w.metric, w.tags) for w in wants] == [("latency_p99", ["#2"])]


def test_url_values_as_typed():
    query = {"model": ["a", "b"], "service": "x, y,,x", "panel": ["p1", " "], "n": None}
    assert urlquery.one(query, "model") == "b" and urlquery.one(query, "n") is None
    assert urlquery.many(query, "service") == ["x", "y"]
    assert urlquery.repeated(query, "panel") == ["p1"]
    assert urlquery.listed(None) == [] and urlquery.listed("a") == ["a"]
    for bad in ("nan", "inf", "-5", "1e300", "9999-12-31T00:00", "yesterday", None):
        assert parse_when(bad) is None, bad
    assert parse_when("2024-12-03T10:00Z") == 1733220000.0
    assert fmt(1e300) == "1e+300"


def test_view_url_shares_services_and_panels():
    state = {"model": None, "start": 100.4, "end": 200.6, "preset": "custom"}
    url = view_url(state, [], [], [], [], services=["PetSite"], panels=['a|m{x="1"}', "n"])
    assert url == "?from=100&to=201&service=PetSite&panel=a%7Cm%7Bx%3D%221%22%7D&panel=n"
