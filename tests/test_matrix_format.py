"""The query_range form of series: values and times written as Prometheus writes them."""

from __future__ import annotations

import numpy as np

from correlator.bundle import Series, format_value, format_values, matrix_document

HARD = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e15, -1e15, 999_999_999_999_999.0, 1e16, 5e-324]
HARD += [1.7976931348623157e308, 0.1 + 0.2, 2.0**53, -3.0, 1e-5, 123.456]


def test_whole_arrays_format_as_each_value_does():
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.normal(0, 1e6, 5000), np.round(rng.normal(0, 1e3, 5000)), HARD])
    assert format_values(values) == [format_value(float(v)) for v in values]
    assert format_values(np.array([1.0, np.nan, -np.inf, 2.5])) == ["1", "NaN", "-Inf", "2.5"]


def test_times_are_rounded_to_the_millisecond_like_round():
    rng = np.random.default_rng(8)
    for ts in (
        1.7e9 + 15.0 * np.arange(1000),  # a scrape grid
        np.rint(rng.uniform(1.7e12, 1.8e12, 1000)) / 1000,  # stored milliseconds
        rng.uniform(1.7e9, 1.8e9, 1000),  # anything a bundle holds
    ):
        doc = matrix_document([Series("m", {"a": "b"}, ts, np.ones(ts.size))])
        got = [t for t, _v in doc["data"]["result"][0]["values"]]
        assert got == [round(float(t), 3) for t in ts]
