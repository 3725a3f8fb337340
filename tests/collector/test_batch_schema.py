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
