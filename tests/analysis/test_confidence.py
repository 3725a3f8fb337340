"""The confidence of the top suspect: its features, fit, reliability and words."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from correlator.analysis import analyze, confidence


def test_features_read_the_margin_and_the_number_of_series():
    # (0.8 - 0.4) / 0.8, and log10(1000).
    assert confidence.features([0.8, 0.4, 0.7, 0.1], series=1000) == pytest.approx([0.5, 3.0])
    # The series count is held to the range the weights were fitted on (240 to 2,345).
    assert confidence.features([0.5], series=1) == pytest.approx([1.0, 2.38])
    assert confidence.features([0.5], series=10**6)[1] == pytest.approx(3.37)
    assert confidence.confidence([], series=10) is None


def test_a_clear_margin_among_few_series_is_trusted_more():
    clear = confidence.confidence([0.9, 0.2, 0.1], series=300)
    close = confidence.confidence([0.9, 0.85, 0.84], series=300)
    many = confidence.confidence([0.9, 0.2, 0.1], series=2000)
    assert clear is not None and close is not None and many is not None
    assert 0 < close < clear < 1 and many < clear


def test_fit_recovers_which_way_a_feature_points():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (400, 2))
    hits = rng.uniform(0, 1, 400) < 1 / (1 + np.exp(-(4 * x[:, 0] - 2)))
    w = confidence.fit(x, hits, l2=0.01)
    assert w[1] == pytest.approx(4, abs=1.2) and abs(w[2]) < 1


def test_reliability_bins_and_the_expected_calibration_error():
    p = np.array([0.1, 0.1, 0.9, 0.9, 0.9, 0.9])
    hits = np.array([0, 0, 1, 1, 1, 0])
    rows, ece = confidence.reliability(p, hits, bins=5)
    assert rows == [(0.0, 0.2, 2, pytest.approx(0.1), 0.0), (0.8, 1.0, 4, 0.9, 0.75)]
    assert ece == pytest.approx((2 * 0.1 + 4 * 0.15) / 6)


@pytest.mark.parametrize(
    ("p", "said"),
    [(None, "no suspect"), (0.9, "likely"), (0.7, "likely"), (0.5, "possible")]
    + [(0.39, "unsure: compare the top 3")],
)
def test_say(p, said):
    assert confidence.say(p) == said
    # With no past incident of its size the chance is not known, whatever the model says.
    assert confidence.say(p, unlike=True) == ("no suspect" if p is None else confidence.UNLIKE)


def test_every_analysis_gives_the_confidence_of_its_top_suspect(bundle):
    out = analyze(bundle)
    scores = [s["score"] for s in out["suspects"]]
    assert out["confidence"] == round(confidence.confidence(scores, len(bundle.series)), 2)
    assert 0 < out["confidence"] < 1


def test_with_too_little_data_before_the_breach_the_chance_is_not_claimed(bundle):
    # Two 5-minute points before the breach and no baseline: no fitted case looked like it.
    step, t0 = 300.0, bundle.series[0].ts[0]
    short = [
        replace(s, ts=t0 + step * np.arange(6), values=s.values[-6:].copy()) for s in bundle.series
    ]
    out = analyze(replace(bundle, series=short, baseline=None), at=t0 + 3 * step)
    assert out["suspects"] and out["confidence"] is None


def test_beyond_the_series_counts_fitted_the_chance_is_as_likely_as_not():
    clear = [0.9, 0.1]
    assert confidence.confidence(clear, series=1000) > confidence.UNSEEN
    for unlike in (50, 10**5):  # fewer or more series than any fitted case had
        assert confidence.confidence(clear, series=unlike) == confidence.UNSEEN
    # Below the cap the model's own answer stands.
    assert confidence.confidence([0.9, 0.89], series=10**5) < confidence.UNSEEN
    assert [confidence.unseen(n) for n in (50, 1000, 10**5)] == [True, False, True]


def test_an_analysis_says_when_no_past_incident_was_of_its_size(bundle):
    out = analyze(bundle)  # four series: fewer than any fitted case had
    assert out["confidence"] == confidence.UNSEEN and out["confidence_unlike"] is True
