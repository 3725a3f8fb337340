import dataclasses

import numpy as np
import pytest

from correlator.analysis import Config, ranking, scoring
from correlator.analysis.pipeline import run_analysis
from tests.analysis.conftest import small_bundle


def test_combine_multiplies_factors_raised_to_their_exponents():
    factors = {"a": np.array([0.5, 0.0, 1.0]), "b": np.array([0.25, 0.9, 0.4])}
    assert np.allclose(ranking.combine(factors, {}), [0.125, 0.0, 0.4])
    got = ranking.combine(factors, {"b": 0.5})
    assert np.allclose(got, [0.25, 0.0, np.sqrt(0.4)])
    assert got[1] == 0.0  # a zero factor gates at any exponent


def test_the_score_is_the_product_of_its_named_factors():
    res = run_analysis(small_bundle())
    s = res.scored
    assert s is not None
    assert tuple(s.factors) == scoring.FACTORS
    product = np.prod(np.vstack(list(s.factors.values())), axis=0)
    assert (product > 0).any() and np.allclose(s.score, product, rtol=1e-12, atol=0)


def test_an_exponent_changes_how_much_its_factor_counts():
    cfg = dataclasses.replace(Config(), exponents=(("severity", 3.0),))
    res = run_analysis(small_bundle(), config=cfg)
    s = res.scored
    assert s is not None
    f = dict(s.factors)
    weak = (f["severity"] > 0) & (f["severity"] < 1)
    assert weak.any()
    plain = np.prod(np.vstack(list(f.values())), axis=0)
    f["severity"] = f["severity"] ** 3
    cubed = np.prod(np.vstack(list(f.values())), axis=0)
    assert np.allclose(s.score, cubed, rtol=1e-12, atol=0)
    assert not np.allclose(s.score[weak], plain[weak], rtol=1e-12, atol=0)


def test_an_exponent_for_no_factor_is_refused_with_the_factors_named():
    cfg = dataclasses.replace(Config(), exponents=(("sevrity", 2.0),))
    with pytest.raises(ValueError, match="sevrity is no factor of the score; the factors are sev"):
        run_analysis(small_bundle(), config=cfg)
