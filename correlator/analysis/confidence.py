"""How far to trust the top suspect: a small logistic model, fitted on the shared incidents."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# The features, in the order of WEIGHTS after the intercept: general traits of an analysis,
# none of a scenario.
FEATURES = (
    "margin",  # (top score - second score) / top score: how clearly the top stands out
    "series",  # log10 of the series analysed: more candidates, more to be fooled by
)
# Intercept and weights, fitted with ``fit`` on the shared incident sets (public, PetShop
# low and high traffic, Nezha OnlineBoutique and TrainTicket: the 83 of 94 cases with a
# real reference); the accuracy benchmark prints the fit and its reliability with each
# group left out (docs/analysis.md).
WEIGHTS = (8.341, 1.87, -2.72)
L2 = 0.2  # the ridge on the weights (not the intercept) that the fit uses
# log10 of the fewest and most series among the fitted cases (240 and 2,345): the model
# does not reach past what it was fitted on. Outside them it knows no case like this one,
# and says at most UNSEEN: as likely as not.
SERIES_SEEN = (2.38, 3.37)
UNSEEN = 0.5
LIKELY = 0.7  # from here on the top suspect is "likely"
UNSURE = 0.4  # below this, "unsure: compare the top 3"
# Outside SERIES_SEEN the chance is not known: why, and the reading that says it.
UNSEEN_WHY = "no past incident had this many series"
UNLIKE = f"unsure: {UNSEEN_WHY}; compare the top 3"


def features(
    scores: Sequence[float], series: int, seen: tuple[float, float] = SERIES_SEEN
) -> np.ndarray:
    """Return the features of an analysis from its suspects' scores, best first."""
    top = float(scores[0]) if scores else 0.0
    second = float(scores[1]) if len(scores) > 1 else 0.0
    margin = (top - second) / top if top > 0 else 0.0
    return np.array([margin, np.clip(np.log10(max(series, 1)), *seen)])


def probability(x: np.ndarray, weights: Sequence[float] = WEIGHTS) -> np.ndarray:
    """Return the modelled chance that the top suspect is a root cause, for feature rows ``x``."""
    w = np.asarray(weights, dtype=float)
    return 1.0 / (1.0 + np.exp(-(w[0] + np.atleast_2d(x) @ w[1:])))


def confidence(
    scores: Sequence[float],
    series: int,
    weights: Sequence[float] = WEIGHTS,
    seen: tuple[float, float] = SERIES_SEEN,
) -> float | None:
    """Return the chance that the top suspect is a root cause (None: no suspect).

    ``seen`` is the range of log10 series counts the weights were fitted on; beyond it the
    chance is held to ``UNSEEN``.
    """
    if not scores:
        return None
    p = float(probability(features(scores, series, seen), weights)[0])
    return min(p, UNSEEN) if unseen(series, seen) else p


def unseen(series: int, seen: tuple[float, float] = SERIES_SEEN) -> bool:
    """Say whether an analysis of so many series lies outside those the weights were fitted on."""
    return not seen[0] <= np.log10(max(series, 1)) <= seen[1]


def say(p: float | None, *, unlike: bool = False) -> str:
    """Return how a person should read a confidence: likely, possible, or compare the top 3.

    ``unlike``: no fitted incident was of this size, so the chance is not known.
    """
    if p is None:
        return "no suspect"
    if unlike:
        return UNLIKE
    if p >= LIKELY:
        return "likely"
    return "possible" if p >= UNSURE else "unsure: compare the top 3"


def fit(x: np.ndarray, hits: np.ndarray, l2: float = L2) -> tuple[float, ...]:
    """Return the intercept and weights of a ridge logistic regression of ``hits`` on ``x``."""
    from scipy.optimize import minimize

    a = np.c_[np.ones(len(x)), x]
    y = np.asarray(hits, dtype=float)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        p = np.clip(1.0 / (1.0 + np.exp(-(a @ w))), 1e-12, 1 - 1e-12)
        value = -(y * np.log(p) + (1 - y) * np.log(1 - p)).sum() + l2 * (w[1:] ** 2).sum()
        grad = a.T @ (p - y) + 2 * l2 * np.r_[0.0, w[1:]]
        return float(value), grad

    found = minimize(loss, np.zeros(a.shape[1]), jac=True, method="L-BFGS-B")
    return tuple(round(float(v), 3) for v in found.x)


def reliability(p: np.ndarray, hits: np.ndarray, bins: int = 5) -> tuple[list[tuple], float]:
    """Return per confidence bin (low, high, cases, mean confidence, hit rate), and the ECE.

    The expected calibration error is the case-weighted mean gap between the two.
    """
    p, y = np.asarray(p, dtype=float), np.asarray(hits, dtype=float)
    rows, ece = [], 0.0
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        inside = (p >= lo) & ((p < hi) | (k == bins - 1))
        if inside.any():
            mean, rate = float(p[inside].mean()), float(y[inside].mean())
            rows.append((lo, hi, int(inside.sum()), mean, rate))
            ece += inside.sum() / p.size * abs(mean - rate)
    return rows, float(ece)
