"""How benchmarks/accuracy.py matches a ranked suspect to a root cause (FORMAT.md, Truth)."""

import sys
from pathlib import Path

# As in test_fit_ranking: benchmarks/ goes first on the path only for this import.
_saved = list(sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import accuracy  # noqa: E402

sys.path[:] = _saved


def _series(metric: str, **labels) -> dict:
    return {"kind": "series", "metric": metric, "labels": labels}


def test_a_histograms_parts_count_as_its_metric():
    cause = {"kind": "series", "metric": "lat", "labels": {"model": "m"}}
    assert accuracy.matches(_series("lat_bucket", model="m", le="0.5"), cause)
    assert not accuracy.matches(_series("lat_bucket", model="other"), cause)
    assert not accuracy.matches(_series("qps", model="m"), cause)


def test_a_cause_without_a_metric_matches_any_series_with_its_labels():
    cause = {"kind": "series", "labels": {"service": "cart"}}
    assert accuracy.matches(_series("cpu", service="cart", pod="cart-1"), cause)
    assert not accuracy.matches(_series("cpu", service="gw"), cause)


def test_a_call_edge_counts_as_its_server_side():
    cause = {"kind": "series", "labels": {"service": "cart"}}
    edge = _series("traces_service_graph_request_failed:increase1m", client="gw", server="cart")
    assert accuracy.matches(edge, cause)
    reverse = _series("traces_service_graph_request_failed:increase1m", client="cart", server="gw")
    assert not accuracy.matches(reverse, cause)


def test_a_change_matches_by_its_id_only():
    cause = {"kind": "change", "id": "chg-1"}
    assert accuracy.matches({"kind": "change", "id": "chg-1"}, cause)
    assert not accuracy.matches({"kind": "change", "id": "chg-2"}, cause)
    assert not accuracy.matches(_series("cpu"), cause)


def test_the_first_matching_rank_is_reported():
    truth = {"root_causes": [{"kind": "series", "labels": {"service": "cart"}}]}
    ranked = [_series("cpu", service="gw"), _series("mem", service="cart")]
    assert accuracy.first_hit(ranked, truth) == 2
    assert accuracy.first_hit(ranked[:1], truth) is None
