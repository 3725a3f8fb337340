import numpy as np

from correlator.analysis.timeline import (
    Grid,
    align,
    choose_grid,
    choose_step,
    counter_rate,
    is_counter,
    merge_label_changes,
)
from tests.analysis.conftest import make_series


def test_counter_rate_handles_reset():
    ts = np.array([0, 10, 20, 30, 40], float)
    vs = np.array([100, 150, 200, 20, 70], float)  # reset between 20 s and 30 s
    t, r = counter_rate(ts, vs)
    assert t.tolist() == [10, 20, 30, 40]
    assert r.tolist() == [5.0, 5.0, 2.0, 5.0]


def test_counter_detection_by_name_and_shape():
    assert is_counter("container_restarts_total")
    assert is_counter("x_count", np.arange(10.0))
    assert not is_counter("requests_sum", np.array([3, 1, 4, 1, 5, 9, 2, 6], float))
    assert not is_counter("gpu_utilization_percent", np.arange(10.0))


def test_align_skew_gaps_and_rates():
    ts = 1000 + 15 * np.arange(8)
    a = make_series("a", {"host": "h1"}, ts + 3, np.arange(8.0))  # clock 3 s ahead
    b = make_series("b", {"host": "h2"}, ts - 4, np.arange(8.0) * 10)  # 4 s behind
    slow = make_series("c", {"host": "h3"}, ts[::4], [1.0, 2.0])  # one sample per minute
    gap = make_series(
        "d", {"host": "h4"}, np.delete(ts, [3, 4, 5]), np.delete(np.arange(8.0), [3, 4, 5])
    )
    series = [a, b, slow, gap]
    step = choose_step(series)
    assert step == 15
    grid = choose_grid(series, step)
    m = align(series, grid)
    assert grid.size == 8
    assert m[0].tolist() == list(range(8))  # skewed samples still land one per bin
    assert m[1].tolist() == [0, 10, 20, 30, 40, 50, 60, 70]
    assert m[2, :4].tolist() == [1, 1, 1, 1]  # carried for its own interval
    assert m[2, 4:8].tolist() == [2, 2, 2, 2]
    assert m[3, 3] == 2 and np.isnan(m[3, 4]) and np.isnan(m[3, 5])  # a long gap stays a gap


def test_grid_bins_are_labelled_by_start():
    g = Grid(origin=100.0, step=10.0, size=5)
    assert g.index(np.array([100.0, 109.9, 110.0, 135.0])).tolist() == [0, 0, 1, 3]
    assert g.times.tolist() == [100, 110, 120, 130, 140]


def test_merge_label_changes_joins_versions():
    old = make_series("q", {"instance": "i1", "version": "1"}, [0, 15, 30], [1, 2, 3])
    new = make_series("q", {"instance": "i1", "version": "2"}, [45, 60], [4, 5])
    other = make_series("q", {"instance": "i2", "version": "1"}, [0, 15], [7, 8])
    merged = merge_label_changes([old, new, other])
    assert len(merged) == 2
    joined = next(s for s in merged if s.labels == {"instance": "i1"})
    assert joined.values.tolist() == [1, 2, 3, 4, 5]
