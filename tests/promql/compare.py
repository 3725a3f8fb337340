"""Compare PromQL answers of causeline and Prometheus, series by series and point by point."""

from __future__ import annotations

import math

import pytest


def answer_of(doc: dict) -> dict:
    """Return a query answer as labels -> [(time, value)]."""
    assert doc["status"] == "success", doc
    out = {}
    for item in doc["data"]["result"]:
        key = tuple(sorted(item["metric"].items()))
        points = item.get("values") or [item["value"]]
        out[key] = [(float(t), float(v)) for t, v in points]
    return out


def same_answer(ours: dict, theirs: dict, what: str) -> None:
    """Assert two answers hold the same series, times and values (to 1e-9)."""
    assert sorted(ours) == sorted(theirs), what
    for key, points in theirs.items():
        mine = ours[key]
        assert [t for t, _ in mine] == [t for t, _ in points], (what, key)
        for (t, a), (_, b) in zip(mine, points, strict=True):
            same = (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=0)
            assert same, (what, key, t, a, b)
