"""The ranking's known failure classes on real microservice data, each as a small seeded case."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from correlator.analysis import Config, analyze, onset
from correlator.analysis.pipeline import _ramp_starts
from correlator.analysis.signals import Signals
from correlator.bundle import Bundle
from tests.analysis.conftest import make_series

T0, STEP = 1_700_000_000.0, 5.0
SERVICES = ("front", "cart", "pay", "ship", "mail")


def _case(n: int, breach: int, edit, *, seed: int = 0, baseline: bool = False) -> Bundle:
    """Return services with CPU, memory, network and latency; ``edit`` injects the story."""
    rng = np.random.default_rng(seed)
    ts = T0 + STEP * np.arange(n)
    rows = {}
    for i, svc in enumerate(SERVICES):
        rows[("cpu_usage_cores", svc)] = 0.3 + 0.1 * i + rng.normal(0, 0.02, n)
        rows[("memory_usage_bytes", svc)] = (200 + 20 * i + rng.normal(0, 2, n)) * 2**20
        rows[("network_receive_bytes_per_second", svc)] = 2e6 + rng.normal(0, 1e5, n)
        rows[("latency_p99_seconds", svc)] = 0.05 + rng.normal(0, 0.002, n)
    front = rows[("latency_p99_seconds", "front")]
    front[breach:] += 0.5
    edit(rows, rng)
    series = [make_series(name, {"service": svc}, ts, v) for (name, svc), v in rows.items()]
    base = None
    if baseline:  # the same services in a normal hour, a day earlier
        brng = np.random.default_rng(seed + 1)
        bts = ts - 86_400
        base = []
        for (name, svc), v in rows.items():
            level = float(np.median(v[: max(breach // 3, 10)]))
            if name == "cpu_usage_cores":
                level = 0.3 + 0.1 * SERVICES.index(svc)
            noise = 0.02 if "cpu" in name else abs(level) * 0.01 + 1e-3
            base.append(make_series(name, {"service": svc}, bts, level + brng.normal(0, noise, n)))
    sla = _sla("latency_p99_seconds", {"service": "front"})
    return Bundle(series=series, changes=[], topology={}, sla=sla, baseline=base)


def _sla(metric: str, labels: dict[str, str]) -> dict:
    """Return an SLA on a p99 latency in seconds: above 0.3 s for 10 s."""
    return {
        "name": f"{next(iter(labels.values()))} p99",
        "metric": metric,
        "labels": labels,
        "aggregate": "max",
        "op": ">",
        "threshold": 0.3,
        "for_seconds": 10,
    }


def _suspects(bundle: Bundle, config: Config | None = None) -> list[tuple]:
    """Return each suspect's metric, service, score and evidence, best first."""
    return [
        (s.get("metric"), (s.get("labels") or {}).get("service"), s["score"], s["evidence"])
        for s in analyze(bundle, config=config)["suspects"]
    ]


def _top(bundle: Bundle, k: int = 1, config: Config | None = None) -> list[tuple[str, str]]:
    return [s[:2] for s in _suspects(bundle, config)[:k]]


def _linked(bundle: Bundle, pairs, **edge) -> Bundle:
    """Return the bundle with SERVICES as nodes and an edge (plus ``edge``'s keys) per pair."""
    nodes = [{"id": f"service:{svc}", "kind": "service"} for svc in SERVICES]
    edges = [{"from": f"service:{a}", "to": f"service:{b}", **edge} for a, b in pairs]
    return replace(bundle, topology={"nodes": nodes, "edges": edges})


FRONT_CALLS = [("front", svc) for svc in SERVICES[1:]]  # front depends on every other service


def test_a_negligible_move_on_a_series_flat_at_zero_does_not_outrank_a_saturation():
    n, breach = 720, 600

    def edit(rows, rng):
        rows[("cpu_usage_cores", "pay")][breach - 24 :] = 0.95 + rng.normal(
            0, 0.02, n - breach + 24
        )
        flat = np.zeros(n)
        flat[breach - 20 :] = 1.5e-6  # a container that idles at zero cores
        rows[("cpu_usage_cores", "idle")] = flat
        quiet = np.zeros(n)
        quiet[breach - 20 :] = 36e3  # 36 kB/s on a link that carried nothing
        rows[("network_receive_bytes_per_second", "idle")] = quiet

    assert _top(_case(n, breach, edit)) == [("cpu_usage_cores", "pay")]


def test_an_onset_after_the_breach_does_not_outrank_one_before_it():
    n, breach = 720, 600

    def edit(rows, rng):
        rows[("latency_p99_seconds", "cart")][breach - 6 :] += 0.3  # 30 s before
        rows[("cpu_usage_cores", "ship")][breach + 7 :] += 1.5  # 35 s after: a symptom

    assert _top(_case(n, breach, edit)) == [("latency_p99_seconds", "cart")]


def test_a_slow_memory_ramp_begun_inside_the_reference_is_found_first():
    n, breach = 1440, 1300

    def edit(rows, rng):
        # A leak climbing for 58 min to the breach: its first half is in the reference window.
        ramp = np.clip((np.arange(n) - (breach - 700)) / 700, 0, None)
        rows[("memory_usage_bytes", "pay")] += ramp * 0.3 * 2**30
        rows[("cpu_usage_cores", "ship")][breach - 12 :] += 0.12  # a small co-occurring bump

    assert _top(_case(n, breach, edit)) == [("memory_usage_bytes", "pay")]


def test_a_steady_difference_from_an_old_baseline_does_not_outrank_a_move_in_the_window():
    n, breach = 360, 300

    def edit(rows, rng):
        # Different from the baseline's day all along and steady to the breach: not this incident.
        rows[("cpu_usage_cores", "pay")][:] = 0.98 + rng.normal(0, 0.01, n)
        rows[("cpu_usage_cores", "mail")][breach - 30 :] += 0.15  # a small move inside

    bundle = _case(n, breach, edit, baseline=True)
    assert _top(bundle) == [("cpu_usage_cores", "mail")]
    # The same difference growing inside the window before the breach keeps its weight.
    cpu = next(
        s for s in bundle.series if s.name == "cpu_usage_cores" and s.labels["service"] == "pay"
    )
    cpu.values[: breach - 60] = 0.7 + np.random.default_rng(3).normal(0, 0.01, breach - 60)
    assert _top(bundle) == [("cpu_usage_cores", "pay")]


def test_a_move_the_harmless_way_does_not_outrank_the_cause():
    n, breach = 720, 600

    def edit(rows, rng):
        # Ship's availability jumps from 40 % to 100 % a minute before the breach: +75 sigma,
        # but more availability never slowed anyone down; cart's latency drops 20 sigma,
        # which slows nobody either. Pay's CPU doubles: the cause.
        avail = 40 + rng.normal(0, 0.05, n)
        avail[breach - 12 :] = 100.0
        rows[("availability_percent", "ship")] = avail
        rows[("latency_p99_seconds", "cart")][breach - 12 :] -= 0.04
        rows[("cpu_usage_cores", "pay")][breach - 12 :] += 0.3

    bundle = _case(n, breach, edit)
    assert _top(bundle) == [("cpu_usage_cores", "pay")]
    # Told that ship's availability hurts going up, it is the top suspect again.
    told = Config(harm=(("availability_percent", 1),))
    assert _top(bundle, config=told) == [("availability_percent", "ship")]


def test_without_call_edges_a_cause_off_the_sla_node_is_not_pushed_out_of_scope():
    n, breach = 720, 600

    def edit(rows, rng):
        rows[("cpu_usage_cores", "pay")][breach - 12 :] += 2.0  # saturated 1 min before
        rows[("network_receive_bytes_per_second", "front")][breach - 6 :] += 1e6  # a symptom

    bundle = _case(n, breach, edit)
    # Nodes and no edges (Nezha's TrainTicket): whether pay is upstream is not known.
    assert _top(_linked(bundle, [])) == [("cpu_usage_cores", "pay")]
    # With a call graph that leaves pay out of front's upstream, the front row comes first.
    linked = _linked(bundle, [("front", "cart")])
    assert _top(linked) == [("network_receive_bytes_per_second", "front")]


def test_a_resource_that_moved_earlier_does_not_explain_a_surge_of_traffic():
    n, breach = 720, 600

    def edit(rows, rng):
        # Front's traffic triples 2 min before the breach: the users' demand, the cause.
        rows[("requests_per_second", "front")] = 100 + rng.normal(0, 2, n)
        rows[("requests_per_second", "front")][breach - 24 :] += 200
        # Cart's memory stepped up 5 min before (+46 sigma), unrelated: no node's memory
        # sends requests.
        rows[("memory_usage_bytes", "cart")][breach - 60 :] += 90 * 2**20

    suspects = _suspects(_linked(_case(n, breach, edit), FRONT_CALLS))
    assert [s[:2] for s in suspects[:2]] == [
        ("requests_per_second", "front"),
        ("memory_usage_bytes", "cart"),
    ]
    assert "follows" not in suspects[0][3]


def test_a_called_services_nic_throughput_is_set_by_its_callers():
    n, breach = 720, 600

    def edit(rows, rng):
        # Front runs short of CPU and sends cart fewer requests: cart's NIC throughput falls
        # further (in sigma) and a little sooner than front's own CPU climbs.
        rows[("cpu_usage_cores", "front")][breach - 6 :] += 0.1
        rows[("network_receive_bytes_per_second", "cart")][breach - 8 :] -= 1.2e6

    bundle = _linked(_case(n, breach, edit), FRONT_CALLS, kind="calls")
    assert _top(bundle) == [("cpu_usage_cores", "front")]


def test_an_older_unrelated_anomaly_of_a_caller_is_no_support():
    n, breach = 720, 600

    def edit(rows, rng):
        rows[("latency_p99_seconds", "front")][breach:] -= 0.1  # +0.4 s: the breach
        for svc, rise in (("cart", 0.2), ("pay", 0.15)):  # both slow 70 s before it
            rows[("latency_p99_seconds", svc)] = 0.05 + rng.normal(0, 0.005, n)
            rows[("latency_p99_seconds", svc)][breach - 14 :] += rise
        rows[("latency_p99_seconds", "mail")][breach - 8 :] += 0.2  # mail waits on cart
        # Ship, which calls pay only, grew its memory 20 min earlier: nothing pay did.
        rows[("memory_usage_bytes", "ship")][breach - 240 :] += 40 * 2**20

    pairs = [
        ("front", "cart"),
        ("front", "pay"),
        ("mail", "cart"),
        ("mail", "pay"),
        ("ship", "pay"),
    ]
    bundle = _linked(_case(n, breach, edit), pairs, kind="calls")
    # Pay has three callers with an anomaly, cart two; only mail's follows a callee (cart).
    assert _top(bundle, k=2) == [("latency_p99_seconds", "cart"), ("latency_p99_seconds", "pay")]


def test_a_surge_explains_a_host_cpu_by_when_the_surge_began_not_when_its_copy_there_showed():
    # A model's traffic reaches its three instances together, but each copy crosses its
    # own noise at its own moment: i-0's at -200 s, i-1's (on host h-1) only at -80 s.
    # h-1's CPU saturates 30 s after that, and follows the surge that began at -200 s.
    rng = np.random.default_rng(3)
    n, breach = 720, 600
    ts = T0 + STEP * np.arange(n)
    series = []
    for k, begins in enumerate((breach - 40, breach - 16, breach - 16)):
        qps = 100 + rng.normal(0, 2, n)
        qps[begins:] += 120
        labels = {"model": "m", "instance": f"i-{k}"}
        series.append(make_series("model_requests_per_second", labels, ts, qps))
        cpu = 40 + rng.normal(0, 2, n)
        if k == 1:
            cpu[breach - 10 :] = 98 + rng.normal(0, 0.5, n - breach + 10)
        series.append(make_series("node_cpu_utilization_percent", {"host": f"h-{k}"}, ts, cpu))
    p99 = 0.05 + rng.normal(0, 0.002, n)
    p99[breach:] += 0.5
    series.append(make_series("model_latency_p99_seconds", {"model": "m"}, ts, p99))
    nodes = [{"id": "model:m", "kind": "model"}]
    edges = []
    for k in range(3):
        nodes += [
            {"id": f"instance:i-{k}", "kind": "instance"},
            {"id": f"host:h-{k}", "kind": "host"},
        ]
        edges += [
            {"from": f"instance:i-{k}", "to": "model:m", "kind": "serves"},
            {"from": f"instance:i-{k}", "to": f"host:h-{k}", "kind": "runs_on"},
        ]
    sla = _sla("model_latency_p99_seconds", {"model": "m"})
    bundle = Bundle(series=series, changes=[], topology={"nodes": nodes, "edges": edges}, sla=sla)
    suspects = analyze(bundle)["suspects"]
    assert suspects[0]["metric"] == "model_requests_per_second"
    cpu = next(s for s in suspects if s["metric"] == "node_cpu_utilization_percent")
    assert "follows model requests per second" in cpu["evidence"]


def _shuffled(bundle: Bundle, seed: int) -> Bundle:
    series = list(bundle.series)
    np.random.default_rng(seed).shuffle(series)
    return replace(bundle, series=series)


def _tied(moves: list[tuple[str, str, float]], calls: list[tuple[str, str]]) -> Bundle:
    """Return a case where each (metric, service, step) moves far past full severity.

    Every move begins a minute before the breach, so the moved rows score the same.
    """
    n, breach = 720, 600

    def edit(rows, rng):
        for name, svc, step in moves:
            rows[(name, svc)][breach - 12 :] += step

    return _linked(_case(n, breach, edit), calls, kind="calls")


def test_equal_scores_are_ordered_by_what_the_rows_are_not_by_their_input_order():
    moves = [("latency_p99_seconds", "ship", 0.5), ("cpu_usage_cores", "pay", 3.0)]
    bundle = _tied(moves, calls=[])
    first = _suspects(bundle)
    assert first[0][2] == first[1][2]  # the tie this test is about
    # Latency travels up to callers; a saturated CPU stays where the fault is.
    assert [s[:2] for s in first[:2]] == [
        ("cpu_usage_cores", "pay"),
        ("latency_p99_seconds", "ship"),
    ]
    for seed in range(4):
        assert _suspects(_shuffled(bundle, seed)) == first


def test_which_rows_are_tried_for_a_ramp_does_not_depend_on_their_input_order():
    # Six replicas leaking alike: equal strengths, and room to try only two of them.
    n, ref_end = 400, 300
    ramp = np.clip((np.arange(n) - 150.0) / 250, 0, None)
    names = [f"memory_usage_bytes_{i}" for i in range(6)]
    cfg = Config(ramp_rows=2)
    found = []
    for seed in range(4):
        order = np.random.default_rng(seed).permutation(6)
        sig = Signals(
            names=[names[i] for i in order],
            labels=[{"service": "pay"}] * 6,
            kinds=["value"] * 6,
            matrix=np.tile(ramp, (6, 1)),
        )
        anomalies = onset.detect(sig.matrix * 40, lo=ref_end, active=(n - 10, n - 1), off=2.5)
        assert len(set(anomalies.strength)) == 1  # the tie this test is about
        rows, starts = _ramp_starts(
            sig, anomalies, np.ones(6, bool), b=n - 1, ref_end=ref_end, cfg=cfg
        )
        assert len(rows) == 2 and (starts > 0).all()
        found.append(sorted(sig.names[i] for i in rows))
    assert found == [names[:2]] * 4


def test_among_equal_scores_the_node_deeper_in_the_calls_comes_first():
    moves = [("cpu_usage_cores", "cart", 3.0), ("cpu_usage_cores", "pay", 3.0)]
    bundle = _tied(moves, calls=[("front", "cart"), ("cart", "pay")])
    for seed in range(4):
        found = _suspects(_shuffled(bundle, seed))
        assert found[0][2] == found[1][2]
        assert [s[:2] for s in found[:2]] == [
            ("cpu_usage_cores", "pay"),
            ("cpu_usage_cores", "cart"),
        ]


def test_equally_scored_changes_come_in_the_same_order_whatever_order_they_came_in(bundle):
    twin = dict(bundle.changes[0], id="a0", summary="the same change, logged twice")
    changes = [*bundle.changes, twin]
    out = analyze(replace(bundle, changes=changes))["suspects"]
    again = analyze(replace(bundle, changes=changes[::-1]))["suspects"]
    listed = [s for s in out if s["kind"] == "change"]
    assert len(listed) == 2 and listed[0]["score"] == listed[1]["score"]
    assert [s.get("id") for s in out] == [s.get("id") for s in again]


def _traced(edit) -> Bundle:
    """Return a case seen through traces only: spanmetrics and servicegraph, no topology.json.

    A gateway calls cart, which calls pay; the SLA is on a front end the traces do not cover.
    """
    n, breach = 360, 300
    rng = np.random.default_rng(5)
    ts = T0 + STEP * np.arange(n)
    rows: dict[tuple, np.ndarray] = {}
    for client, server in (("gateway", "cart"), ("cart", "pay")):
        edge = (("client", client), ("server", server))
        rows[("traces_service_graph_request:increase1m", edge)] = 600 + rng.normal(0, 10, n)
        rows[_client(client)] = 0.02 + rng.normal(0, 0.001, n)
    for svc in ("gateway", "cart", "pay"):
        rows[("cpu_usage_cores", (("service", svc),))] = 0.4 + rng.normal(0, 0.02, n)
        rows[("log_lines:count1m", (("service", svc), ("level", "error")))] = np.zeros(n)
    front = 0.05 + rng.normal(0, 0.002, n)
    front[breach:] += 0.5
    rows[("latency_p99_seconds", (("service", "front"),))] = front
    edit(rows, rng, breach)
    series = [make_series(name, dict(labels), ts, v) for (name, labels), v in rows.items()]
    sla = _sla("latency_p99_seconds", {"service": "front"})
    return Bundle(series=series, changes=[], topology={}, sla=sla)


def _client(svc: str) -> tuple:
    return (
        "traces_span_metrics_duration_p99_seconds",
        (("service", svc), ("span_kind", "SPAN_KIND_CLIENT")),
    )


def test_latency_that_travels_up_the_calls_is_blamed_on_the_callee_that_failed():
    def edit(rows, rng, breach):
        # Pay's network turns slow: every caller's client spans wait the extra 0.4 s, the
        # callers' own rows move far in sigma, and pay logs errors at a modest rate.
        for svc in ("gateway", "cart"):
            rows[_client(svc)][breach - 12 :] += 0.4
        errors = rows[("log_lines:count1m", (("service", "pay"), ("level", "error")))]
        errors[breach - 12 :] = 4 + rng.poisson(2, len(errors) - breach + 12)

    top, *rest = analyze(_traced(edit))["suspects"]
    assert (top["metric"], top["labels"]) == (
        "log_lines:count1m",
        {"service": "pay", "level": "error"},
    )
    assert top["evidence"].startswith("error log lines on pay 0/min -> 7/min")
    # The callers' client spans moved further in sigma and at the same moment: not ahead.
    callers = [s for s in rest if s["labels"].get("span_kind") == "SPAN_KIND_CLIENT"]
    assert len(callers) == 2 and all(s["score"] < top["score"] for s in callers)


def test_one_services_latency_on_many_operations_is_one_suspect_beside_another_cause():
    def edit(rows, rng, breach):
        # Cart's server spans slow on six operations at once, far in sigma; the gateway's
        # CPU rises at the same moment by fewer sigma.
        for k in range(6):
            span = (("service", "cart"), ("span_kind", "SPAN_KIND_SERVER"), ("span_name", f"op{k}"))
            key = ("traces_span_metrics_duration_p99_seconds", span)
            rows[key] = 0.03 + rng.normal(0, 0.001, len(rows[_client("cart")]))
            rows[key][breach - 12 :] += 0.45
        rows[("cpu_usage_cores", (("service", "gateway"),))][breach - 12 :] += 0.3

    top = analyze(_traced(edit))["suspects"][:3]
    cart = [s for s in top if s["metric"] == "traces_span_metrics_duration_p99_seconds"]
    assert len(cart) == 1 and len(cart[0]["members"]) == 6
    assert cart[0]["evidence"].endswith("moved on 6 of 6 operations")
    assert ("cpu_usage_cores", {"service": "gateway"}) in [(s["metric"], s["labels"]) for s in top]


def test_a_call_a_few_milliseconds_slower_does_not_outrank_the_cause_of_a_slow_front():
    n, breach = 720, 600

    def edit(rows, rng):
        # Ship's p99 is steady to a tenth of a millisecond and rises 3 ms: 30 sigma, but 3 ms
        # of a 500 ms breach. Pay's CPU rises 0.2 cores: fewer sigma, and the cause.
        rows[("latency_p99_seconds", "ship")] = 0.01 + rng.normal(0, 1e-4, n)
        rows[("latency_p99_seconds", "ship")][breach - 12 :] += 0.003
        rows[("cpu_usage_cores", "pay")][breach - 12 :] += 0.2

    bundle = _case(n, breach, edit)
    assert _top(bundle) == [("cpu_usage_cores", "pay")]
    # Weighed by sigma alone, the tiny rise comes first.
    by_sigma = Config(latency_least=1.0)
    assert _top(bundle, config=by_sigma) == [("latency_p99_seconds", "ship")]


def test_an_endpoint_seen_only_by_its_callers_does_not_outrank_the_service_behind_it():
    n, breach = 720, 600

    def edit(rows, rng):
        # Cart slows by 0.3 s; its callers see the load balancer in front of it (an X-Ray
        # remote node) slow by that and the network's share more: the larger move.
        rows[("latency_p99_seconds", "cart")][breach - 12 :] += 0.3
        lb = 0.06 + rng.normal(0, 0.002, n)
        lb[breach - 12 :] += 0.45
        rows[("latency_p99_seconds", "cart-lb.example.com_remote")] = lb

    bundle = _case(n, breach, edit)
    assert _top(bundle) == [("latency_p99_seconds", "cart")]
    # Counted as the endpoint's own, the callers' view comes first.
    own = Config(client_side=1.0)
    assert _top(bundle, config=own) == [("latency_p99_seconds", "cart-lb.example.com_remote")]


def test_traffic_falling_away_explains_nothing_that_follows_it():
    n, breach = 720, 600

    def edit(rows, rng):
        # Front's traffic falls a fifth 5 min before the breach (users leaving a slow page);
        # pay's CPU rises 1 min before: a fall in demand loads nobody.
        rows[("requests_per_second", "front")] = 100 + rng.normal(0, 2, n)
        rows[("requests_per_second", "front")][breach - 60 :] -= 20
        rows[("cpu_usage_cores", "pay")][breach - 12 :] += 0.3

    suspects = _suspects(_linked(_case(n, breach, edit), FRONT_CALLS))
    assert suspects[0][:2] == ("cpu_usage_cores", "pay")
    assert "follows" not in suspects[0][3]


def test_a_change_counts_only_between_the_onset_search_and_the_breach(bundle):
    """Made after the breach (a mitigation) or before the span searched: not a suspect."""
    breach = analyze(bundle)["breach_start"]
    first = bundle.changes[0]
    after = dict(first, id="after", ts=breach + 120, summary="rolled back")
    before = dict(first, id="before", ts=breach - Config().search_s - 60, summary="old")
    near = dict(first, id="near", ts=breach - 60, summary="the same, a minute before")
    out = analyze(replace(bundle, changes=[first, after, before, near]))["suspects"]
    listed = {s["id"]: s["score"] for s in out if s["kind"] == "change"}
    assert set(listed) == {first["id"], "near"}
    assert listed["near"] > listed[first["id"]]  # closer to the breach, the same otherwise


def test_the_breached_series_at_another_statistic_is_a_symptom_not_a_suspect():
    n, breach = 720, 600

    def edit(rows, rng):
        rows[("cpu_usage_cores", "cart")][breach - 20 :] += 0.6  # the cause, 100 s before
        p50 = 0.02 + rng.normal(0, 0.001, n)
        p50[breach - 12 :] += 0.3  # the same latency at p50 moves first, and far more
        rows[("latency_p50_seconds", "front")] = p50
        rows[("latency_p50_seconds", "cart")] = 0.02 + rng.normal(0, 0.001, n)

    suspects = _suspects(_case(n, breach, edit))
    named = [s[:2] for s in suspects]
    assert ("latency_p50_seconds", "front") not in named
    assert named[0] == ("cpu_usage_cores", "cart")


def test_among_moves_past_full_severity_at_one_moment_the_larger_leads():
    # Held-out class 3: a dozen series jump far past full severity at once; the order among
    # them keeps the size of the move instead of falling to the rows' names.
    moves = [("cpu_usage_cores", "cart", 3.0), ("cpu_usage_cores", "ship", 12.0)]
    for seed in range(4):
        found = _suspects(_shuffled(_tied(moves, calls=[]), seed))
        assert found[0][2] == found[1][2]  # both saturate: equal scores
        assert [s[:2] for s in found[:2]] == [
            ("cpu_usage_cores", "ship"),
            ("cpu_usage_cores", "cart"),
        ]


def _coarse(before: int, seed: int) -> Bundle:
    """Return 5-minute data with ``before`` points before the breach and no baseline.

    pay's CPU rises by 0.3 cores (15 times its noise) at the breach's point.
    """
    rng = np.random.default_rng(seed)
    n, step = before + 3, 300.0
    ts = T0 + step * np.arange(n)
    series = []
    for i, svc in enumerate(SERVICES):
        cpu = 0.3 + 0.1 * i + rng.normal(0, 0.02, n)
        memory = (200 + 20 * i + rng.normal(0, 2, n)) * 2**20
        latency = 0.05 + rng.normal(0, 0.002, n)
        if svc == "pay":
            cpu[before:] += 0.3
        if svc == "front":
            latency[before:] += 0.5
        for name, values in (
            ("cpu_usage_cores", cpu),
            ("memory_usage_bytes", memory),
            ("latency_p99_seconds", latency),
        ):
            series.append(make_series(name, {"service": svc}, ts, values))
    sla = _sla("latency_p99_seconds", {"service": "front"}) | {"for_seconds": 0}
    return Bundle(series=series, changes=[], topology={}, sla=sla, baseline=None)


def test_with_one_or_two_coarse_points_before_the_breach_the_cause_still_leads():
    # Held-out class 5: no baseline, and only one or two 5-minute points before the breach.
    for before in (1, 2):
        for seed in range(6):
            assert _top(_coarse(before, seed)) == [("cpu_usage_cores", "pay")], (before, seed)


def _declared(minutes: int, breach_after_s: float) -> Bundle:
    """Return minute data whose breach an outside alert declared ``breach_after_s`` after a sample.

    At the first sample after the breach pay's error log lines (a count over the minute
    before each sample) go from 0 to 20 and ship's CPU (a gauge) jumps: both far past
    full severity, seen at the same sample.
    """
    rng = np.random.default_rng(3)
    step = 60.0
    ts = T0 + step * np.arange(minutes)
    cut = minutes - 5
    series = []
    for i, svc in enumerate(SERVICES):
        cpu = 0.3 + 0.1 * i + rng.normal(0, 0.02, minutes)
        errors = np.zeros(minutes)
        latency = 0.05 + rng.normal(0, 0.002, minutes)
        if svc == "pay":
            errors[cut:] = 20 + rng.poisson(3, 5)
        if svc == "ship":
            cpu[cut:] += 3.0
        if svc == "front":
            latency[cut:] += 0.5
        series += [
            make_series("cpu_usage_cores", {"service": svc}, ts, cpu),
            make_series("log_lines:count1m", {"service": svc, "level": "error"}, ts, errors),
            make_series("latency_p99_seconds", {"service": svc}, ts, latency),
        ]
    sla = {
        "name": "front p99",
        "metric": "latency_p99_seconds",
        "labels": {"service": "front"},
        "breach_start": float(ts[cut - 1] + breach_after_s),
    }
    return Bundle(series=series, changes=[], topology={}, sla=sla, baseline=None)


def test_a_count_over_the_minute_before_a_sample_began_with_that_minute():
    # An alert declares the breach 25 s after a sample. The next sample's error count covers
    # the minute since that one, so the errors began up to 25 s before the breach; the
    # CPU figure is an instant, read 35 s after it.
    found = analyze(_declared(120, 25.0))["suspects"]
    by_row = {(s["metric"], s["labels"].get("service")): s for s in found}
    errors, cpu = by_row[("log_lines:count1m", "pay")], by_row[("cpu_usage_cores", "ship")]
    assert errors["lead_seconds"] == 25 and cpu["lead_seconds"] < 0
    assert (found[0]["metric"], found[0]["labels"]["service"]) == ("log_lines:count1m", "pay")
    assert errors["score"] > cpu["score"]


NO_WAVES = Config(wave_nodes=10**9)


def test_a_host_figure_copied_to_each_of_its_services_singles_out_none():
    # A wave: one host's CPU, copied to the four services it runs, jumps at the moment
    # pay's own CPU does. The copies are one event on the host and name no service.
    def edit(rows, rng):
        host = 0.1 + rng.normal(0, 0.005, 120)
        host[80:] += 0.6
        for svc in SERVICES[1:]:
            rows[("node_cpu_usage_ratio", svc)] = host.copy()
        rows[("cpu_usage_cores", "pay")][80:] += 1.0

    case = _case(120, 84, edit)
    assert _top(case, config=NO_WAVES)[0][0] == "node_cpu_usage_ratio"  # a copy led before
    assert _top(case) == [("cpu_usage_cores", "pay")]
    copies = [s for s in _suspects(case) if s[0] == "node_cpu_usage_ratio"]
    assert len(copies) == 4
    assert all(s[3].endswith("; moved at one moment on 4 services") for s in copies)
    assert all("follows" not in s[3] for s in copies)  # no copy leads the others


def test_the_largest_move_of_a_resource_wave_leads_and_explains_the_others():
    def edit(rows, rng):
        for svc, jump in (("cart", 30), ("pay", 300), ("ship", 25), ("mail", 20)):
            rows[("memory_usage_bytes", svc)][80:] += jump * 2**20

    case = _case(120, 84, edit)
    found = {s[1]: s for s in _suspects(case) if s[0] == "memory_usage_bytes"}
    plain = {s[1]: s for s in _suspects(case, NO_WAVES) if s[0] == "memory_usage_bytes"}
    assert "follows" not in found["pay"][3] and found["pay"][2] == plain["pay"][2]
    for svc in ("cart", "ship", "mail"):
        assert "follows memory usage bytes on pay" in found[svc][3]
        assert found[svc][3].endswith("moved at one moment on 4 services")
        assert found[svc][2] < plain[svc][2]


def test_latency_rising_on_several_services_at_once_is_left_to_the_calls():
    # Callers' latency moves with what they wait on: no wave, whatever their number.
    def edit(rows, rng):
        for svc in SERVICES[1:]:
            rows[("latency_p99_seconds", svc)][80:] += 0.2

    found = [s for s in _suspects(_case(120, 84, edit)) if s[0] == "latency_p99_seconds"]
    assert len(found) == 4
    assert not any("moved at one moment" in s[3] for s in found)


def _rpc(edit) -> Bundle:
    """Return a case seen through span metrics of RPCs: a gateway calls cart, pay and ship.

    Each call has the gateway's CLIENT span and the callee's SERVER span of one RPC name, as
    gRPC instrumentations name them (Python's server spans keep the path's leading slash).
    """
    n, breach = 360, 300
    rng = np.random.default_rng(7)
    ts = T0 + STEP * np.arange(n)
    rows: dict[tuple, np.ndarray] = {}
    for svc in ("gateway", "cart", "pay", "ship"):
        rows[("cpu_usage_cores", (("service", svc),))] = 0.4 + rng.normal(0, 0.02, n)
    for svc in ("cart", "pay", "ship"):
        served = 0.01 + rng.normal(0, 5e-4, n)
        rows[_span("gateway", "CLIENT", svc)] = served + 0.002 + rng.normal(0, 2e-4, n)
        rows[_span(svc, "SERVER", svc)] = served
    front = 0.05 + rng.normal(0, 0.002, n)
    front[breach:] += 0.5
    rows[("latency_p99_seconds", (("service", "front"),))] = front
    edit(rows, rng, breach)
    series = [make_series(name, dict(labels), ts, v) for (name, labels), v in rows.items()]
    topology = {
        "nodes": [{"id": f"service:{s}"} for s in ("front", "gateway", "cart", "pay", "ship")],
        "edges": [{"from": "service:front", "to": "service:gateway", "kind": "calls"}],
    }
    sla = _sla("latency_p99_seconds", {"service": "front"})
    return Bundle(series=series, changes=[], topology=topology, sla=sla)


def _span(svc: str, kind: str, callee: str) -> tuple:
    name = f"shop.{callee.title()}/Get"
    return (
        "traces_span_metrics_duration_p99_seconds",
        (("service", svc), ("span_kind", f"SPAN_KIND_{kind}"), ("span_name", name)),
    )


def test_a_call_slow_between_caller_and_handler_is_blamed_on_the_callee():
    def edit(rows, rng, breach):
        # Cart's network turns slow: the gateway waits 0.4 s more, cart handles as fast.
        rows[_span("gateway", "CLIENT", "cart")][breach - 12 :] += 0.4
        server = _span("cart", "SERVER", "cart")
        rows[(server[0], (*server[1][:2], ("span_name", "/shop.Cart/Get")))] = rows.pop(server)

    top, *rest = analyze(_rpc(edit))["suspects"]
    assert top["metric"] == "call_gap_duration_p99_seconds"
    assert top["labels"] == {"client": "gateway", "server": "cart", "span_name": "shop.Cart/Get"}
    assert top["evidence"].startswith("cart (server side of gateway -> cart): call gap")
    # The gateway's client span moved as far, and is the caller's view of it: below.
    client = [s for s in rest if s["labels"].get("span_kind") == "SPAN_KIND_CLIENT"]
    assert client and all(s["score"] < top["score"] for s in client)


def test_calls_slow_alike_towards_every_callee_are_the_callers_own():
    def edit(rows, rng, breach):
        # The gateway is starved of CPU: each of its calls waits 0.3 s more on its side.
        rows[("cpu_usage_cores", (("service", "gateway"),))][breach - 12 :] += 0.5
        for svc in ("cart", "pay", "ship"):
            rows[_span("gateway", "CLIENT", svc)][breach - 12 :] += 0.3 + rng.normal(0, 0.02)

    out = analyze(_rpc(edit))["suspects"]
    assert (out[0]["metric"], out[0]["labels"]) == ("cpu_usage_cores", {"service": "gateway"})
    # The gaps say no more than the gateway's own spans: none is listed against a callee.
    assert not [s for s in out if s["metric"].startswith("call_gap")]


def test_a_call_gap_does_not_follow_the_client_span_it_is_made_from():
    def edit(rows, rng, breach):
        # Cart handles slowly for a minute (both spans +0.1 s), then handles as fast as ever
        # while its network turns slow (the client span alone, +0.5 s): the client span has
        # been out of range since the first minute, the gap only since the second.
        rows[_span("gateway", "CLIENT", "cart")][breach - 24 :] += 0.1
        rows[_span("cart", "SERVER", "cart")][breach - 24 : breach - 12] += 0.1
        rows[_span("gateway", "CLIENT", "cart")][breach - 12 :] += 0.4

    out = analyze(_rpc(edit))["suspects"]
    gap = next(s for s in out if s["metric"] == "call_gap_duration_p99_seconds")
    assert gap["rank"] == 1 and "follows" not in gap["evidence"]


def test_a_call_gap_to_one_callee_does_not_explain_the_gap_to_another():
    def edit(rows, rng, breach):
        # Cart's network turns a little slow first, pay's far slower a minute later: two
        # callees' own troubles, which meet only in the caller that measures them.
        rows[_span("gateway", "CLIENT", "cart")][breach - 24 :] += 0.1
        rows[_span("gateway", "CLIENT", "pay")][breach - 12 :] += 0.5

    out = analyze(_rpc(edit))["suspects"]
    top = out[0]
    assert top["labels"].get("server") == "pay" and "follows" not in top["evidence"]


def test_a_move_the_harmless_way_explains_nothing_that_follows_it():
    n, breach = 720, 600

    def edit(rows, rng):
        # Pay's latency falls by half 3 min before the breach (a cache warmed up: faster
        # answers slow nobody); pay's CPU doubles 1 min before: the cause. Ship's CPU rises
        # less at the same moment.
        rows[("latency_p99_seconds", "pay")][breach - 36 :] -= 0.025
        rows[("cpu_usage_cores", "pay")][breach - 12 :] += 0.5
        rows[("cpu_usage_cores", "ship")][breach - 12 :] += 0.3

    suspects = _suspects(_linked(_case(n, breach, edit), FRONT_CALLS))
    assert suspects[0][:2] == ("cpu_usage_cores", "pay"), suspects[:3]
    assert "follows" not in suspects[0][3]
    assert ("latency_p99_seconds", "pay") in [s[:2] for s in suspects]  # still evidence
