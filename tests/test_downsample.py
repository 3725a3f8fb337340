"""Min-max downsampling keeps every bucket's extremes and drops the rest."""

from __future__ import annotations

import numpy as np

from correlator.downsample import minmax


def test_minmax_keeps_extremes_of_each_bucket_in_time_order():
    rng = np.random.default_rng(7)
    ts = np.arange(0.0, 1000.0, 1.0)
    values = rng.normal(size=ts.size)
    values[437] = 50.0  # a one-sample spike must survive
    values[10] = np.nan
    out_ts, out_v = minmax(ts, values, 100.0)
    assert out_ts.size == 20
    assert np.all(np.diff(out_ts) > 0)
    for b in range(10):
        window = (ts >= b * 100) & (ts < (b + 1) * 100) & ~np.isnan(values)
        got = out_v[(out_ts >= b * 100) & (out_ts < (b + 1) * 100)]
        assert sorted(got) == sorted([values[window].min(), values[window].max()])
    assert 50.0 in out_v


def test_minmax_leaves_sparse_series_alone():
    ts = np.array([0.0, 500.0, 900.0])
    values = np.array([1.0, 2.0, 3.0])
    out_ts, out_v = minmax(ts, values, 100.0)
    np.testing.assert_array_equal(out_ts, ts)
    np.testing.assert_array_equal(out_v, values)
