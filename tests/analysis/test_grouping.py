"""Copies of one signal on sibling series become one suspect with members."""

from __future__ import annotations

import numpy as np
import pytest

from correlator.analysis import analyze
from correlator.analysis.grouping import first_onsets, group_series, sibling_counts, subject
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
def test_no_two_of_the_top_five_are_one_metric_on_sibling_series(case):
    suspects = analyze(read_bundle(case))["suspects"][:5]
    seen = set()
    for s in suspects:
        if s["kind"] != "series":
            continue
        key = subject(s["metric"], s["labels"]) or (s["metric"], tuple(sorted(s["labels"].items())))
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
