"""Copies of one signal on sibling series become one suspect with members."""

from __future__ import annotations

import numpy as np
import pytest

from correlator.analysis import analyze
from correlator.analysis.grouping import (
    first_onsets,
    group_series,
    sibling_counts,
    signal,
    subject,
)
from correlator.bundle import read_bundle
from tests.analysis.conftest import PUBLIC


def _suspect(metric: str, labels: dict, score: float, **more) -> dict:
    return {
        "kind": "series",
        "metric": metric,
        "labels": labels,
        "score": score,
        "onset": 100,
        "lead_seconds": 60,
        "z": 9.0,
        "evidence": f"{metric} moved",
        **more,
    }


def test_subject_needs_a_copy_label_and_a_shared_one():
    assert subject("q", {"model": "m", "instance": "i-1"}) == ("q", (("model", "m"),))
    assert subject("t", {"host": "h", "gpu": "0", "instance": "i"}) == ("t", (("host", "h"),))
    assert subject("q", {"instance": "i-1"}) is None  # nothing shared: different subjects
    assert subject("lat", {"service": "a"}) is None  # services are subjects, not copies


def test_a_services_span_metric_over_its_operations_is_one_signal():
    span = {"service": "cart", "span_kind": "SPAN_KIND_SERVER"}
    names = ["traces_span_metrics_duration_p99_seconds"] * 3
    labels = [span | {"span_name": f"op{k}"} for k in range(3)]
    assert subject(names[0], labels[0]) is None  # an operation is no copy of another
    assert signal(names[0], labels[0]) == ("traces_span_metrics_duration", tuple(span.items()))
    found = [_suspect(names[0], labels[k], 0.9 - k / 10) for k in (0, 2)]
    (head,) = group_series(found, sibling_counts(names, labels))
    assert head["labels"] == span
    assert [m["labels"] for m in head["members"]] == [{"span_name": "op0"}, {"span_name": "op2"}]
    assert head["evidence"].endswith("moved on 2 of 3 operations")


def test_statistics_of_one_metric_are_one_suspect_that_names_them():
    db = {"service": "db"}
    names = ["latency_p99", "latency_avg", "latency_p50", "errors_sum"]
    found = [
        _suspect("latency_p99", db, 0.4),
        _suspect("errors_sum", db, 0.3),
        _suspect("latency_avg", db, 0.2),
    ]
    out = group_series(found, sibling_counts(names, [db] * 4))
    assert [s["metric"] for s in out] == ["latency_p99", "errors_sum"]
    assert [m["metric"] for m in out[0]["members"]] == ["latency_p99", "latency_avg"]
    assert out[0]["labels"] == db and out[0]["score"] == 0.4
    assert (
        out[0]["evidence"] == "latency_p99 moved; moved on 2 of 2 series: latency_p99, latency_avg"
    )


def test_copies_fold_into_the_strongest_and_others_keep_their_place():
    found = [
        _suspect("queue", {"model": "m", "instance": "i-2"}, 0.9),
        _suspect("cpu", {"host": "h1"}, 0.8),
        _suspect("queue", {"model": "m", "instance": "i-1"}, 0.7),
        _suspect("queue", {"model": "other", "instance": "o-1"}, 0.6),
        {"kind": "change", "id": "chg-1", "score": 0.5, "evidence": "deploy"},
    ]
    totals = sibling_counts(
        ["queue"] * 5, [{"model": "m", "instance": f"i-{k}"} for k in range(4)] + [{}]
    )
    out = group_series(found, totals)
    assert [s.get("metric") or s["id"] for s in out] == ["queue", "cpu", "queue", "chg-1"]
    head = out[0]
    assert head["labels"] == {"model": "m"} and head["score"] == 0.9
    assert [m["labels"] for m in head["members"]] == [{"instance": "i-2"}, {"instance": "i-1"}]
    assert head["evidence"] == "queue moved; moved on 2 of 4 instances"
    assert "members" not in out[2] and out[2]["labels"] == {"model": "other", "instance": "o-1"}


@pytest.mark.skipif(not PUBLIC, reason="public scenarios not found")
@pytest.mark.parametrize("case", PUBLIC, ids=lambda p: p.name)
def test_no_two_of_the_top_five_are_views_of_one_signal(case):
    suspects = analyze(read_bundle(case))["suspects"][:5]
    seen = set()
    for s in suspects:
        if s["kind"] != "series":
            continue
        key = signal(s["metric"], s["labels"]) or (s["metric"], tuple(sorted(s["labels"].items())))
        assert key not in seen, (s["metric"], s["labels"])
        seen.add(key)


def test_copies_of_a_signal_began_with_their_first_live_copy():
    names = ["q", "q", "q", "q", "cpu"]
    labels = [
        {"model": "m", "instance": "i-0"},
        {"model": "m", "instance": "i-1"},
        {"model": "m", "instance": "i-2"},  # never out of range: keeps its own onset
        {"model": "n", "instance": "j-0"},  # another model: another signal
        {"host": "h"},  # no copies
    ]
    onset = np.array([300.0, 100.0, 50.0, 200.0, 400.0])
    live = np.array([True, True, False, True, True])
    assert first_onsets(names, labels, onset, live).tolist() == [100.0, 100.0, 50.0, 200.0, 400.0]
