import numpy as np
import pytest

from correlator.analysis import Config, onset
from correlator.analysis.ranking import family
from correlator.analysis.topology import Topology, label_nodes

GROWN = Config().grown_share


def test_reference_is_robust_to_outliers():
    rng = np.random.default_rng(1)
    row = 50 + rng.normal(0, 1, 200)
    row[::20] = 500  # rare spikes
    ref = onset.reference(row[None, :], rel_floor=0.0, abs_floor=1e-9)
    assert ref.median[0] == pytest.approx(50, abs=0.3)
    assert ref.count[0] == 200


def test_flat_series_gets_a_relative_floor():
    ref = onset.reference(np.full((1, 50), 100.0), rel_floor=0.02, abs_floor=1e-9)
    assert ref.scale[0] == pytest.approx(2.0)


def test_detect_finds_onset_of_a_step_despite_noise():
    rng = np.random.default_rng(5)
    n, start = 200, 150
    x = rng.normal(0, 1, n)
    x[start:] += 8
    x[100] = 9  # one noisy spike long before
    ref = onset.reference(x[None, :120], rel_floor=0.0, abs_floor=1e-9)
    z = onset.smooth(onset.robust_z(x[None, :], ref), 3)
    a = onset.detect(z, lo=120, active=(165, 175), off=2.5, grown_share=GROWN)
    assert a.direction[0] == 1 and a.strength[0] > 5
    assert abs(int(a.onset[0]) - start) <= 1
    assert a.persistence[0] > 0.9


def test_detect_sees_drops_too():
    x = np.r_[np.full(50, 10.0), np.full(10, 2.0)]
    ref = onset.reference(x[None, :40], rel_floor=0.02, abs_floor=1e-9)
    a = onset.detect(
        onset.robust_z(x[None, :], ref), lo=40, active=(55, 59), off=2.5, grown_share=GROWN
    )
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
    a = onset.detect(onset.robust_z(x, ref), lo=10, active=(12, 14), off=2.5, grown_share=GROWN)
    assert a.onset.tolist() == [10, 10, 10]
    assert a.censored.tolist() == [False, True, True]
    a = onset.detect(onset.robust_z(x, ref), lo=0, active=(12, 14), off=2.5, grown_share=GROWN)
    assert a.onset.tolist() == [10, 8, 0]
    assert a.censored.tolist() == [False, False, True]


def test_a_step_has_grown_at_its_onset_and_a_ramp_late():
    step = np.r_[np.zeros(20), np.full(20, 10.0)]
    ramp = np.r_[np.zeros(20), np.linspace(0.5, 10.0, 20)]
    ref = onset.Reference(np.zeros(2), np.ones(2), np.full(2, 20))
    a = onset.detect(
        onset.robust_z(np.array([step, ramp]), ref),
        lo=10,
        active=(30, 39),
        off=2.5,
        grown_share=GROWN,
    )
    assert a.onset.tolist() == [20, 25]  # the ramp leaves the range (2.5) at 3.0
    assert a.grown.tolist() == [20, 35]  # the ramp first reaches 8 = 0.8 x its peak at 35


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
