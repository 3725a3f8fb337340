import numpy as np
import pytest

from correlator.analysis import onset
from correlator.analysis.ranking import family
from correlator.analysis.topology import Topology, label_nodes, with_calls


def test_reference_is_robust_to_outliers():
    rng = np.random.default_rng(1)
    row = 50 + rng.normal(0, 1, 200)
    row[::20] = 500  # rare spikes
    ref = onset.reference(row[None, :], rel_floor=0.0, abs_floor=1e-9)
    assert ref.median[0] == pytest.approx(50, abs=0.3)
    assert ref.count[0] == 200


def test_flat_series_gets_a_relative_floor():
    ref = onset.reference(np.full((1, 16), 100.0), rel_floor=0.08, abs_floor=1e-9)
    assert ref.scale[0] == pytest.approx(2.0)


def test_a_longer_flat_reference_gets_a_tighter_floor():
    # 16 points flat at 100 allow 2 % of the level as noise, 256 points (a day's baseline at
    # 5 minutes) a quarter of that: a 4 % dip is out of range only against the long one.
    short, long = (np.full((1, n), 100.0) for n in (16, 256))
    dip = np.array([[96.0]])
    for ref_rows, out in ((short, False), (long, True)):
        ref = onset.reference(ref_rows, rel_floor=0.08, abs_floor=1e-9)
        assert bool(abs(onset.robust_z(dip, ref)[0, 0]) > 2.5) is out
    gappy = np.full((1, 256), np.nan)
    gappy[0, :16] = 100.0
    ref = onset.reference(gappy, rel_floor=0.08, abs_floor=1e-9)
    assert ref.scale[0] == pytest.approx(2.0)  # points seen count, not the span


def test_detect_finds_onset_of_a_step_despite_noise():
    rng = np.random.default_rng(5)
    n, start = 200, 150
    x = rng.normal(0, 1, n)
    x[start:] += 8
    x[100] = 9  # one noisy spike long before
    ref = onset.reference(x[None, :120], rel_floor=0.0, abs_floor=1e-9)
    z = onset.robust_z(x[None, :], ref)
    a = onset.detect(z, lo=120, active=(165, 175), off=2.5)
    assert a.direction[0] == 1 and a.strength[0] > 5
    assert abs(int(a.onset[0]) - start) <= 1
    assert a.persistence[0] > 0.9


def test_detect_sees_drops_too():
    x = np.r_[np.full(50, 10.0), np.full(10, 2.0)]
    ref = onset.reference(x[None, :40], rel_floor=0.02, abs_floor=1e-9)
    a = onset.detect(onset.robust_z(x[None, :], ref), lo=40, active=(55, 59), off=2.5)
    assert a.direction[0] == -1 and int(a.onset[0]) == 50


def test_onset_where_the_search_starts_is_seen_when_the_point_before_is_normal():
    # Rows: a step right where the search starts (10), a step already out before it, a step
    # at the first column of all. Only the first has a seen onset.
    x = np.array(
        [
            np.r_[np.full(10, 10.0), np.full(5, 20.0)],
            np.r_[np.full(8, 10.0), np.full(7, 20.0)],
            np.full(15, 20.0),
        ]
    )
    ref = onset.Reference(np.full(3, 10.0), np.full(3, 1.0), np.full(3, 10))
    a = onset.detect(onset.robust_z(x, ref), lo=10, active=(12, 14), off=2.5)
    assert a.onset.tolist() == [10, 10, 10]
    assert a.censored.tolist() == [False, True, True]
    a = onset.detect(onset.robust_z(x, ref), lo=0, active=(12, 14), off=2.5)
    assert a.onset.tolist() == [10, 8, 0]
    assert a.censored.tolist() == [False, False, True]


def test_a_ramp_begins_where_it_leaves_the_range():
    step = np.r_[np.zeros(20), np.full(20, 10.0)]
    ramp = np.r_[np.zeros(20), np.linspace(0.5, 10.0, 20)]
    ref = onset.Reference(np.zeros(2), np.ones(2), np.full(2, 20))
    a = onset.detect(
        onset.robust_z(np.array([step, ramp]), ref),
        lo=10,
        active=(30, 39),
        off=2.5,
    )
    assert a.onset.tolist() == [20, 25]  # the ramp leaves the range (2.5) at 3.0


def test_topology_upstream_and_instance_inherits_calls():
    g = Topology.from_dict(
        {
            "nodes": [
                {"id": i} for i in ("model:m", "instance:i", "host:h", "service:f", "host:fh")
            ],
            "edges": [
                {"from": "instance:i", "to": "model:m", "kind": "serves"},
                {"from": "instance:i", "to": "host:h", "kind": "runs_on"},
                {"from": "model:m", "to": "service:f", "kind": "calls"},
                {"from": "service:f", "to": "host:fh", "kind": "runs_on"},
            ],
        }
    )
    assert g.distances({"model:m"}) == {
        "model:m": 0,
        "instance:i": 1,
        "service:f": 1,
        "host:h": 2,
        "host:fh": 2,
    }
    assert g.reaches("instance:i") == {"host:h", "service:f", "host:fh"}
    assert "model:m" not in g.reaches("host:h")


def test_label_nodes_order_and_family():
    assert label_nodes({"model": "m", "instance": "i"}) == ["instance:i", "model:m"]
    assert label_nodes({"gpu": "0", "host": "h", "instance": "i"}) == ["host:h", "instance:i"]
    assert family("model_latency_p99_ms") == "model_latency"
    assert family("latency_avg") == "latency"


def test_calls_measured_on_edges_join_the_topology_once():
    labels = [
        {"client": "gw", "server": "cart"},
        {"client": "gw", "server": "cart", "status": "failed"},
        {"client": "cart", "server": "cart"},  # a service calling itself adds no edge
        {"service": "pay"},
    ]
    given = {"nodes": [{"id": "service:gw", "kind": "service"}], "edges": []}
    out = with_calls(given, labels)
    assert [n["id"] for n in out["nodes"]] == ["service:gw", "service:cart"]
    assert out["edges"] == [{"from": "service:gw", "to": "service:cart", "kind": "calls"}]
    assert with_calls(out, labels) == out
    assert with_calls(given, [{"service": "pay"}]) is given
    assert label_nodes({"client": "gw", "server": "cart"}) == ["service:cart"]
    assert label_nodes({"service": "pay", "server": "cart"}) == ["service:pay"]


def test_an_sla_outside_the_call_graph_depends_on_its_entry_points():
    calls = [("gw", "cart"), ("cart", "pay"), ("admin", "pay")]
    g = Topology.from_dict(
        {
            "nodes": [{"id": f"service:{s}"} for s in ("front", "gw", "cart", "pay", "admin")],
            "edges": [
                {"from": f"service:{a}", "to": f"service:{b}", "kind": "calls"} for a, b in calls
            ],
        }
    )
    assert g.callers["service:pay"] == {"service:cart", "service:admin"}
    assert g.upstream({"service:front"}) == {
        "service:front": 0,
        "service:gw": 1,
        "service:admin": 1,
        "service:cart": 2,
        "service:pay": 2,
    }
    # An SLA inside the graph keeps its own dependencies.
    assert g.upstream({"service:cart"}) == {"service:cart": 0, "service:pay": 1}
