"""The PromQL evaluator and Prometheus' arithmetic on small hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from correlator.promql.evaluate import Raw, run, steps_of
from correlator.promql.functions import bucket_quantile, window_rates
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


def _one(values, start, end, func="increase", ts=MS):
    got, present = window_rates(
        ts, np.asarray(values, float), np.array([start]), np.array([end]), func
    )
    return float(got[0]) if present[0] else None


def test_rate_extrapolates_to_the_window_edges_and_counts_a_reset():
    # 4 samples 10 s apart inside [-5 s, 35 s]: edges 5 s away (< 1.1 * 10 s) are extrapolated
    values = [10.0, 20.0, 5.0, 15.0]  # a reset after 20 adds 20
    got = _one(values, -5_000, 35_000)
    assert got == pytest.approx((15 - 10 + 20) * 40 / 30)
    assert _one(values, -5_000, 35_000, "rate") == pytest.approx(got / 40)


def test_rate_stops_at_zero_and_half_an_interval_past_a_far_edge():
    values = np.array([1.0, 11.0, 21.0, 31.0])  # zero point 1 s before the first sample
    assert _one(values, -100_000, 30_000) == pytest.approx(30 * (30 + 1 + 0) / 30)
    assert _one(values + 100, -100_000, 100_000) == pytest.approx(30 * (30 + 5 + 5) / 30)
    assert _one(values[:1], 0, 1, "rate", MS[:1]) is None


def test_irate_uses_the_last_two_samples():
    assert _one([0.0, 5.0, 10.0, 30.0], 0, 30_000, "irate") == 2.0
    assert _one([0.0, 5.0, 10.0, 4.0], 0, 30_000, "irate") == 0.4  # reset: the last value


def _prometheus_window(ts, values, start, end, func):
    """Prometheus 2.42's extrapolatedRate and instantValue for one window, line by line."""
    keep = (ts >= start) & (ts <= end)
    ts, values = ts[keep].tolist(), values[keep].tolist()
    if len(values) < 2:
        return None
    if func == "irate":
        last, previous = values[-1], values[-2]
        change = last if last < previous else last - previous
        gap = ts[-1] - ts[-2]
        return None if gap == 0 else change / (gap / 1000)
    correction, last = 0.0, 0.0
    for value in values:
        if value < last:
            correction += last
        last = value
    result = last - values[0] + correction
    to_start, to_end = (ts[0] - start) / 1000, (end - ts[-1]) / 1000
    sampled = (ts[-1] - ts[0]) / 1000
    average = sampled / (len(values) - 1)
    if result > 0 and values[0] >= 0:
        to_zero = sampled * (values[0] / result)
        if to_zero < to_start:
            to_start = to_zero
    threshold = average * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else average / 2
    interval += to_end if to_end < threshold else average / 2
    factor = interval / sampled
    if func == "rate":
        factor /= (end - start) / 1000
    return result * factor


@pytest.mark.parametrize("func", ["rate", "increase", "irate"])
def test_every_window_at_once_equals_prometheus_window_by_window(func):
    rng = np.random.default_rng(3)
    ts = np.sort(rng.choice(np.arange(0, 3_600_000, 1_000), 500, replace=False)).astype(np.int64)
    values = np.cumsum(rng.exponential(3.0, ts.size)) * rng.choice([1e-3, 1.0, 1e9])
    for cut in rng.choice(ts.size, 12, replace=False):  # resets, some to zero
        values[cut:] -= values[cut] - rng.choice([0.0, rng.random()])
    ends = np.arange(-60_000, 3_700_000, 7_000, dtype=np.int64)
    for width in (1_000, 15_000, 60_000, 300_000, 1_800_000):
        got, present = window_rates(ts, values, ends - width, ends, func)
        for i, end in enumerate(ends.tolist()):
            want = _prometheus_window(ts, values, end - width, end, func)
            assert present[i] == (want is not None), (width, end)
            if want is not None:
                assert got[i] == want, (width, end)  # the same float, not close to it


def test_bucket_quantile_interpolates_fixes_monotonicity_and_needs_inf():
    buckets = [(0.1, 1.0), (0.5, 3.0), (1.0, 4.0), (math.inf, 5.0)]
    assert bucket_quantile(0.5, buckets) == pytest.approx(0.1 + 0.4 * (2.5 - 1) / 2)
    assert bucket_quantile(0.95, buckets) == 1.0  # rank in the +Inf bucket
    assert bucket_quantile(0.1, buckets) == pytest.approx(0.05)
    # unsorted, and 2.0's count below 1.0's is raised to it; rank 2.5 of 5 is in (0, 0.5]
    unordered = [(1.0, 4.0), (0.5, 3.0), (2.0, 2.0), (math.inf, 5.0)]
    assert bucket_quantile(0.5, unordered) == pytest.approx(0.5 * 2.5 / 3)
    # rank 0 in an empty lowest bucket: 0/0 as a float, NaN as in Prometheus (not an error)
    assert math.isnan(bucket_quantile(0.0, [(0.1, 0.0), (1.0, 3.0), (math.inf, 3.0)]))
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
        ("limitk(3, g)", "aggregation limitk"),
        ("histogram_count(g)", "native histograms"),
        ("mad_over_time(g[5m])", "not in Prometheus 2.42"),
        ('g{a="1" or b="2"}', "'or' inside a selector"),
        ("g[5m]", "range vector is not supported as the result"),
        ("g[5m:1m]", "range vector is not supported as the result"),
        ('"text"', "a string is not supported"),
        ("g @ -100", "before 1970"),
        ("holt_winter(g[5m], 0.5, 0.5)", "cannot parse"),
        ("rate(g)", "cannot parse"),
        ("g{", "cannot parse"),
    ],
)
def test_anything_else_is_refused_naming_the_part(query, needle):
    with pytest.raises(Unsupported, match=needle):
        parse_query(query)


@pytest.mark.parametrize(
    "query",
    [
        "quantile(0.5, g)",
        "quantile_over_time(0.5, g[1m])",
        "max_over_time((g / 0)[1m:10s])",  # infinite values: windows walked one by one
        "histogram_quantile(0.5, g)",
    ],
)
def test_per_step_loops_check_the_deadline_as_they_go(query):
    """A query walking thousands of steps gives its caller's deadline a say every 1,024."""
    steps = np.arange(0, 10_000 * 10_000, 10_000, dtype=np.int64)
    labels = {"__name__": "g", "le": "+Inf", "i": "1"}
    store = [Raw(labels, steps.copy(), np.arange(steps.size, dtype=float) + 1)]
    ticks = []
    run(parse_query(query), steps, _fetch(store), lambda: ticks.append(1))
    assert len(ticks) >= steps.size // 1024, (query, len(ticks))
