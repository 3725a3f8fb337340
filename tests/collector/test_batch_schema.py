"""Validation of one-point series, the shape agents send, against the general rules."""

from __future__ import annotations

import math

import pytest

from collector.schema import BatchError, parse_batch


def _one(ts, value) -> dict:
    return {"series": [{"name": "m", "labels": {"a": "1"}, "timestamps": [ts], "values": [value]}]}


@pytest.mark.parametrize(
    ("ts", "value", "field"),
    [
        (math.nan, 1.0, "series[0].timestamps[0]"),
        (-1.0, 1.0, "series[0].timestamps[0]"),
        (1e11, 1.0, "series[0].timestamps[0]"),
        (math.inf, 1.0, "series[0].timestamps[0]"),
        (True, 1.0, "series[0].timestamps[0]"),
        ("1.7e9", 1.0, "series[0].timestamps[0]"),
        (1.7e9, math.nan, "series[0].values[0]"),
        (1.7e9, -math.inf, "series[0].values[0]"),
        (1.7e9, None, "series[0].values[0]"),
        (1.7e9, False, "series[0].values[0]"),
    ],
)
def test_a_bad_single_point_is_refused_naming_it(ts, value, field):
    with pytest.raises(BatchError) as err:
        parse_batch(_one(ts, value))
    assert err.value.path == field


@pytest.mark.parametrize(
    ("ts", "value"), [(0.0, -0.0), (1.7e9, 5e-324), (1_700_000_000, 3), (99_999_999_999.9, 1e308)]
)
def test_a_good_single_point_is_kept_as_sent(ts, value):
    series = parse_batch(_one(ts, value)).series[0]
    assert series.timestamps == [ts] and series.values == [value]
    assert type(series.timestamps[0]) is type(ts) and type(series.values[0]) is type(value)


NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("stamps", "field"),
    [
        ([NOW], "series[0].timestamps[0]"),  # one point, the agent's shape: the bound itself
        ([NOW - 15, NOW - 1e-3], None),
        ([NOW - 15, NOW, NOW - 30], "series[0].timestamps[1]"),
        ([1_700_000_000, NOW + 86_400], "series[0].timestamps[1]"),  # an int: the slow path
        ([2e10], "series[0].timestamps[0]"),
    ],
)
def test_timestamps_from_not_after_on_are_refused_naming_the_first(stamps, field):
    doc = {"series": [{"name": "m", "timestamps": stamps, "values": [1.0] * len(stamps)}]}
    if field is None:
        assert parse_batch(doc, not_after=NOW).series[0].timestamps == stamps
        return
    with pytest.raises(BatchError) as err:
        parse_batch(doc, not_after=NOW)
    assert err.value.path == field
    assert "later than the latest this service accepts, 2027-01-15 08:00:00 UTC" in str(err.value)
    assert "check the sender's clock" in err.value.reason
    assert parse_batch(doc).series[0].timestamps == stamps  # no bound: up to 1e11


def test_an_event_from_not_after_on_is_refused():
    event = {"id": "xid-1", "ts": NOW + 1, "kind": "gpu_xid", "summary": "Xid 79"}
    with pytest.raises(BatchError) as err:
        parse_batch({"series": [], "events": [event]}, not_after=NOW)
    assert err.value.path == "events[0].ts"
    assert parse_batch({"series": [], "events": [event]}).events[0].ts == NOW + 1
