"""The PromQL evaluator and Prometheus' arithmetic on small hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from correlator.promql.evaluate import Raw, run, steps_of
from correlator.promql.functions import bucket_quantile, extrapolated_rate, instant_rate
from correlator.promql.plan import Unsupported, parse_query

MS = np.array([0, 10_000, 20_000, 30_000], dtype=np.int64)


def _fetch(store: list[Raw]):
    def fetch(selector, start_ms, end_ms):
        out = []
        for raw in store:
            labels = {k: v for k, v in raw.labels.items() if k != "__name__"}
            if selector.matches(raw.labels["__name__"], labels):
                keep = (raw.ts >= start_ms) & (raw.ts <= end_ms)
                out.append(Raw(raw.labels, raw.ts[keep], raw.values[keep]))
        return out

    return fetch


def test_rate_extrapolates_to_the_window_edges_and_counts_a_reset():
    # 4 samples 10 s apart inside [-5 s, 35 s]: edges 5 s away (< 1.1 * 10 s) are extrapolated
    values = np.array([10.0, 20.0, 5.0, 15.0])  # a reset after 20 adds 20
    got = extrapolated_rate(MS, values, -5_000, 35_000, is_counter=True, is_rate=False)
    assert got == pytest.approx((15 - 10 + 20) * 40 / 30)
    rate = extrapolated_rate(MS, values, -5_000, 35_000, is_counter=True, is_rate=True)
    assert rate == pytest.approx(got / 40)


def test_rate_stops_at_zero_and_half_an_interval_past_a_far_edge():
    values = np.array([1.0, 11.0, 21.0, 31.0])  # zero point 1 s before the first sample
    got = extrapolated_rate(MS, values, -100_000, 30_000, is_counter=True, is_rate=False)
    assert got == pytest.approx(30 * (30 + 1 + 0) / 30)
    far = extrapolated_rate(MS, values + 100, -100_000, 100_000, is_counter=True, is_rate=False)
    assert far == pytest.approx(30 * (30 + 5 + 5) / 30)
    assert extrapolated_rate(MS[:1], values[:1], 0, 1, is_counter=True, is_rate=True) is None


def test_irate_uses_the_last_two_samples():
    assert instant_rate(MS, np.array([0.0, 5.0, 10.0, 30.0])) == 2.0
    assert instant_rate(MS, np.array([0.0, 5.0, 10.0, 4.0])) == 0.4  # reset: the last value


def test_bucket_quantile_interpolates_fixes_monotonicity_and_needs_inf():
    buckets = [(0.1, 1.0), (0.5, 3.0), (1.0, 4.0), (math.inf, 5.0)]
    assert bucket_quantile(0.5, buckets) == pytest.approx(0.1 + 0.4 * (2.5 - 1) / 2)
    assert bucket_quantile(0.95, buckets) == 1.0  # rank in the +Inf bucket
    assert bucket_quantile(0.1, buckets) == pytest.approx(0.05)
    # unsorted, and 2.0's count below 1.0's is raised to it; rank 2.5 of 5 is in (0, 0.5]
    unordered = [(1.0, 4.0), (0.5, 3.0), (2.0, 2.0), (math.inf, 5.0)]
    assert bucket_quantile(0.5, unordered) == pytest.approx(0.5 * 2.5 / 3)
    assert bucket_quantile(0.9, unordered) == 2.0  # rank 4.5 past the raised 2.0 bucket
    assert math.isnan(bucket_quantile(0.5, [(1.0, 4.0)]))
    assert bucket_quantile(2, buckets) == math.inf and bucket_quantile(-1, buckets) == -math.inf


def test_steps_lookback_aggregation_and_scalar_arithmetic():
    store = [
        Raw({"__name__": "g", "job": "a", "i": "1"}, MS, np.array([1.0, 2.0, 3.0, 4.0])),
        Raw({"__name__": "g", "job": "a", "i": "2"}, MS[:2], np.array([10.0, 20.0])),
    ]
    steps = steps_of(0, 350_000, 30_000)
    assert steps.tolist()[-1] == 330_000  # start + k * step <= end
    out = run(parse_query("g{i=~'1|2'}"), steps, _fetch(store))
    one = out[0]
    assert one.labels == {"__name__": "g", "job": "a", "i": "1"}
    # value 4 at 30 s stays visible for 5 minutes (closed window), then goes stale
    assert one.present.tolist() == [True] * 12  # 30 s + 300 s = 330 s: still in
    total = run(parse_query("sum by (job) (g) * 2"), steps, _fetch(store))[0]
    assert total.labels == {"job": "a"}
    assert total.values[:3].tolist() == [22.0, 48.0, 48.0]
    assert total.values[-1] == 8.0  # series 2's last sample (10 s) is stale by 330 s
    assert run(parse_query("count without (i) (g)"), steps, _fetch(store))[0].values[0] == 2
    assert run(parse_query("-(2 ^ 3) + 1"), steps[:1], _fetch(store)).tolist() == [-7.0]


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ("topk(3, g)", "aggregation topk"),
        ("abs(g)", "function abs()"),
        ("g / g", "two vectors"),
        ("g > 1", "operator >"),
        ("g[5m:1m]", "subqueries"),
        ("g @ 100", "@ modifier"),
        ("g[5m]", "range vector"),
        ("rate(g)", "cannot parse"),
        ("g{", "cannot parse"),
    ],
)
def test_anything_else_is_refused_naming_the_part(query, needle):
    with pytest.raises(Unsupported, match=needle):
        parse_query(query)
