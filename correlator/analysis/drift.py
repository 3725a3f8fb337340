"""Drift of a binned distribution against a reference: PSI, KS, Jensen-Shannon, Wasserstein."""

from __future__ import annotations

import numpy as np

# Customary PSI bands: < 0.1 stable, 0.1-0.25 moderate shift (warn), > 0.25 major (critical).
PSI_WARN = 0.1
PSI_CRITICAL = 0.25
KS_WARN = 0.1
JS_WARN = 0.1
EPS = 1e-4


def _probs(counts: np.ndarray) -> np.ndarray:
    counts = np.clip(np.nan_to_num(np.asarray(counts, dtype=np.float64)), 0, None)
    total = counts.sum(axis=-1, keepdims=True)
    return np.divide(counts, total, out=np.full_like(counts, np.nan), where=total > 0)


def psi(current: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Return the population stability index of each current distribution (last axis bins)."""
    p, q = _probs(current), _probs(reference)
    p, q = np.clip(p, EPS, None), np.clip(q, EPS, None)
    return np.sum((p - q) * np.log(p / q), axis=-1)


def ks(current: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Return the Kolmogorov-Smirnov statistic (largest gap of the binned CDFs)."""
    p, q = _probs(current), _probs(reference)
    return np.max(np.abs(np.cumsum(p, axis=-1) - np.cumsum(q, axis=-1)), axis=-1)


def jensen_shannon(current: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Return the Jensen-Shannon distance (base 2, in [0, 1]) as scipy computes it."""
    p, q = _probs(current), _probs(reference)
    p, q = np.broadcast_arrays(p, q)
    m = (p + q) / 2

    def kl(a, b):
        terms = np.where(a > 0, a * np.log2(np.where(a > 0, a, 1) / np.where(b > 0, b, 1)), 0.0)
        return terms.sum(axis=-1)

    return np.sqrt(np.clip((kl(p, m) + kl(q, m)) / 2, 0, None))


def wasserstein(current: np.ndarray, reference: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Return the 1-Wasserstein distance with each bin's mass placed at ``points``."""
    p, q = _probs(current), _probs(reference)
    gaps = np.diff(points)
    cdf_gap = np.abs(np.cumsum(p, axis=-1) - np.cumsum(q, axis=-1))[..., :-1]
    return np.sum(cdf_gap * gaps, axis=-1)


def bin_points(bounds: np.ndarray) -> np.ndarray:
    """Return one representative value per histogram bucket (midpoints; last finite bound)."""
    finite = np.where(np.isfinite(bounds), bounds, np.nan)
    lower = np.concatenate(([0.0], finite[:-1]))
    mid = (lower + finite) / 2
    last = np.nanmax(finite) if np.isfinite(finite).any() else 0.0
    return np.where(np.isfinite(mid), mid, last)


def level(value: float) -> str:
    """Name the PSI band of a value: stable, warn or critical."""
    if value >= PSI_CRITICAL:
        return "critical"
    return "warn" if value >= PSI_WARN else "stable"
