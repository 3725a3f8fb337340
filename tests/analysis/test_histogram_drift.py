import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import jensenshannon

from correlator.analysis import drift, histogram
from correlator.analysis.timeline import Grid
from tests.analysis.conftest import make_series

BOUNDS = np.array([1, 2, 4, 8, 16, 32, 64, np.inf], float)


def test_bucket_counts_from_cumulative():
    cum = np.array([[1, 3, 3, 7], [0, 0, 5, 4]], float)  # second row has a broken last bucket
    assert histogram.bucket_counts(cum).tolist() == [[1, 2, 0, 4], [0, 0, 5, 0]]


def test_quantile_matches_numpy_within_bucket_resolution():
    rng = np.random.default_rng(7)
    fine = np.arange(0, 101, 1.0)  # 1-unit buckets: interpolation error below one bucket
    bounds = np.append(fine[1:], np.inf)
    data = rng.gamma(4.0, 8.0, 20_000)
    counts = np.histogram(data, bins=np.append(fine, np.inf))[0].astype(float)
    for q in (0.5, 0.9, 0.95, 0.99):
        got = histogram.quantile(bounds, counts, q)[0]
        assert abs(got - np.quantile(data, q)) < 1.0


def test_quantile_prometheus_interpolation_and_inf_bucket():
    counts = np.array([[10, 10, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 5]], float)
    got = histogram.quantile(BOUNDS, counts, 0.75)
    assert got[0] == pytest.approx(1.5)  # rank 15: halfway through the (1, 2] bucket
    assert got[1] == 64  # in +Inf: the highest finite bound, as Prometheus answers


def test_histogram_build_from_counter_buckets():
    ts = 1000 + 15 * np.arange(5)
    per_window = np.array([[4, 6], [2, 8], [10, 0], [5, 5]], float)  # counts in (0,1], (1,+Inf]
    cum_le1 = np.concatenate(([0], np.cumsum(per_window[:, 0])))
    cum_inf = np.concatenate(([0], np.cumsum(per_window.sum(axis=1))))
    parts = [
        make_series("x_bucket", {"le": "+Inf"}, ts, cum_inf),
        make_series("x_bucket", {"le": "1"}, ts, cum_le1),
    ]
    grid = Grid(origin=ts[0] - 7.5, step=15.0, size=5)
    h = histogram.build(parts, grid, name="x_bucket", labels={})
    assert h.bounds.tolist() == [1, np.inf]
    assert np.allclose(h.counts[1:], per_window)


def test_psi_hand_computed():
    p, q = np.array([30.0, 70.0]), np.array([50.0, 50.0])
    want = (0.3 - 0.5) * np.log(0.3 / 0.5) + (0.7 - 0.5) * np.log(0.7 / 0.5)
    assert drift.psi(p, q) == pytest.approx(want)
    assert drift.psi(q, q) == pytest.approx(0.0)
    assert drift.level(0.05) == "stable" and drift.level(0.2) == "warn"
    assert drift.level(0.61) == "critical"


def test_ks_js_wasserstein_against_scipy():
    rng = np.random.default_rng(3)
    p = rng.integers(1, 50, 8).astype(float)
    q = rng.integers(1, 50, 8).astype(float)
    points = drift.bin_points(BOUNDS)
    # KS on binned data: the largest CDF gap, as ks_2samp gives on the expanded samples.
    a = np.repeat(points, p.astype(int))
    b = np.repeat(points, q.astype(int))
    assert drift.ks(p, q) == pytest.approx(stats.ks_2samp(a, b).statistic)
    assert drift.jensen_shannon(p, q) == pytest.approx(jensenshannon(p, q, base=2))
    assert drift.wasserstein(p, q, points) == pytest.approx(
        stats.wasserstein_distance(points, points, p, q)
    )


def test_drift_over_windows_is_vectorised():
    ref = np.array([50.0, 50.0])
    windows = np.array([[50, 50], [30, 70], [10, 90]], float)
    psi = drift.psi(windows, ref)
    assert psi[0] == pytest.approx(0) and psi[1] < psi[2]
