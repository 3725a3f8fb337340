"""The exponent fit of benchmarks/fit_ranking.py on made-up incidents with a known answer."""

import sys
from pathlib import Path

import numpy as np

# The script and its neighbours put benchmarks/ first on the path, where its dashboard.py
# would hide the dashboard package from every later import: the path is put back after.
_saved = list(sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fit_ranking  # noqa: E402

sys.path[:] = _saved


def _cases(n: int, seed: int) -> list:
    """Return incidents whose cause row stands out by factor "a" only; "b" is noise."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        a = rng.uniform(0.1, 0.6, 30)
        b = rng.uniform(0.1, 1.0, 30)
        a[0] = rng.uniform(0.5, 1.0)  # the cause: larger "a", any "b"
        hit = np.zeros(30, dtype=bool)
        hit[0] = True
        cases.append((np.log(np.column_stack([a, b])), hit, ["a", "b"]))
    return cases


def test_the_fit_weighs_the_factor_that_tells_causes_apart():
    a, b = fit_ranking.fit(_cases(40, 0), lam=1.0, k=2)
    assert a > 1.0 > b  # relative to the shared value both started from


def test_a_stronger_ridge_keeps_the_exponents_closer_to_equal():
    loose = fit_ranking.fit(_cases(40, 1), lam=0.1, k=2)
    tight = fit_ranking.fit(_cases(40, 1), lam=100.0, k=2)
    assert abs(tight[0] - tight[1]) < abs(loose[0] - loose[1])


def test_held_out_chance_is_better_for_the_fitted_exponents_than_for_reversed_ones():
    train, test = _cases(40, 2), _cases(20, 3)
    w = fit_ranking.fit(train, lam=1.0, k=2)
    assert fit_ranking.held_out_nll(w, test) < fit_ranking.held_out_nll(w[::-1], test)
