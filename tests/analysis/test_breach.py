import numpy as np
import pytest

from correlator.analysis.breach import SlaMatchError, aggregate, evaluate, find_breach, matching
from correlator.analysis.timeline import Grid
from tests.analysis.conftest import make_series

T = 1000 + 15 * np.arange(12, dtype=float)


def breach(values, for_seconds=30, op=">", threshold=10):
    return find_breach(
        T, np.array(values, float), op=op, threshold=threshold, for_seconds=for_seconds
    )


def test_first_sustained_violation_and_end():
    b = breach([0, 0, 20, 20, 20, 20, 0, 0, 0, 0, 0, 0])
    assert (b.start, b.end) == (T[4], T[6])  # 30 s after the run began, back at T[6]


def test_flapping_never_lasts_long_enough():
    assert breach([0, 20, 0, 20, 0, 20, 20, 0, 20, 0, 20, 0]).start is None
    assert breach([0, 20, 0, 20, 0, 20, 20, 20, 0, 0, 0, 0]).start == T[7]


def test_nan_neither_breaks_nor_extends_a_run():
    b = breach([0, 20, np.nan, 20, 0, 0, 0, 0, 0, 0, 0, 0])
    assert b.start == T[3]  # T[1]..T[3] span 30 s; the missing point is skipped
    assert breach([np.nan] * 12).start is None


def test_breach_at_window_edges():
    b = breach([0] * 9 + [20, 20, 20])
    assert (b.start, b.end) == (T[11], None)  # still ongoing at the end of the data
    assert breach([20] * 3 + [0] * 9).start == T[2]  # already bad at the first sample


def test_never_breached_and_less_than():
    assert breach([5] * 12).start is None
    assert breach([5, 5, 1, 1, 1, 5, 5, 5, 5, 5, 5, 5], op="<", threshold=2).start == T[4]
    assert breach([0, 20, 0] + [0] * 9, for_seconds=0).start == T[1]


def test_aggregate_ignores_missing():
    m = np.array([[1, np.nan, 3], [5, 2, np.nan]], float)
    assert aggregate(m, "max").tolist() == [5, 2, 3]
    assert aggregate(m, "mean").tolist() == [3, 2, 3]
    assert aggregate(m, "sum").tolist() == [6, 2, 3]
    assert aggregate(m, "min").tolist() == [1, 2, 3]


def test_evaluate_aggregates_matching_series_and_takes_given_start():
    s1 = make_series("lat", {"model": "m", "instance": "a"}, T, [1] * 6 + [9] * 6)
    s2 = make_series("lat", {"model": "m", "instance": "b"}, T + 2, [1] * 12)
    other = make_series("lat", {"model": "x"}, T, [99] * 12)
    grid = Grid(origin=T[0] - 5, step=15, size=12)
    sla = {
        "name": "s",
        "metric": "lat",
        "labels": {"model": "m"},
        "aggregate": "max",
        "op": ">",
        "threshold": 5,
        "for_seconds": 15,
    }
    found, agg, rows = evaluate([s1, s2, other], sla, grid)
    assert rows == [0, 1]
    assert found.start == grid.times[7] and not found.given
    given, _, _ = evaluate([s1, s2], {"name": "s", "metric": "lat", "breach_start": 1050.0}, grid)
    assert given.start == 1050.0 and given.given


def test_sla_matching_nothing_names_metric_and_labels():
    s = make_series("lat", {"model": "m"}, T, [1] * 12)
    with pytest.raises(SlaMatchError) as err:
        matching([s], {"name": "p99", "metric": "lat", "labels": {"model": "zz"}})
    assert isinstance(err.value, ValueError)
    assert "'lat'" in str(err.value) and 'model="zz"' in str(err.value)


def test_last_breach_is_the_start_of_the_newest_run_that_held():
    from correlator.analysis.breach import last_breach

    t = np.arange(0, 200, 10.0)
    v = np.zeros(t.size)
    v[2:6] = 9  # held 30 s: a breach at t=50 (for_seconds 20 -> t=40)
    v[9:10] = 9  # too short
    v[13:18] = 9  # from t=130, held for 20 s at t=150
    v[15] = np.nan  # a gap neither breaks nor extends: held from t=160, the next value
    kw = {"op": ">", "threshold": 5.0, "for_seconds": 20.0}
    assert find_breach(t, v, **kw).start == 40.0
    assert last_breach(t, v, **kw) == 160.0
    assert last_breach(t, np.zeros(t.size), **kw) is None
