"""Prometheus histogram buckets turned into per-window distributions and quantiles."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from correlator.analysis.timeline import Grid, align
from correlator.bundle import Series


@dataclass(slots=True)
class Histogram:
    """One histogram: its bucket bounds and per-window counts (window x bucket)."""

    name: str
    labels: dict[str, str]
    bounds: np.ndarray
    counts: np.ndarray
    parts: list[Series] = field(default_factory=list)


def parse_le(text: str) -> float:
    """Return a bucket's upper bound from its ``le`` label."""
    return float("inf") if text.strip() in ("+Inf", "Inf", "inf") else float(text)


def group_buckets(series: list[Series]) -> dict[tuple, list[Series]]:
    """Group ``*_bucket`` series with an ``le`` label by name and other labels."""
    groups: dict[tuple, list[Series]] = {}
    for s in series:
        if s.name.endswith("_bucket") and "le" in s.labels:
            rest = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            groups.setdefault((s.name, rest), []).append(s)
    return groups


def bucket_counts(cumulative: np.ndarray) -> np.ndarray:
    """Turn cumulative per-``le`` counts (..., bucket) into per-bucket counts, never negative."""
    filled = np.nan_to_num(cumulative, nan=0.0)
    filled = np.maximum.accumulate(filled, axis=-1)  # cumulative buckets never decrease
    return np.diff(filled, axis=-1, prepend=0.0)


def build(parts: list[Series], grid: Grid, *, name: str, labels: dict) -> Histogram:
    """Return a histogram's per-window bucket counts on the grid (counter rates x step)."""
    bounds = np.array([parse_le(p.labels["le"]) for p in parts])
    order = np.argsort(bounds)
    parts = [parts[i] for i in order]
    cumulative = align(parts, grid) * grid.step  # (bucket, window)
    return Histogram(name, labels, bounds[order], bucket_counts(cumulative.T), parts)


def quantile(bounds: np.ndarray, counts: np.ndarray, q: float) -> np.ndarray:
    """Estimate the q-quantile per window as Prometheus ``histogram_quantile`` does."""
    counts = np.atleast_2d(counts)
    total = counts.sum(axis=1)
    cum = np.cumsum(counts, axis=1)
    rank = q * total
    idx = np.array([np.searchsorted(c, r, side="left") for c, r in zip(cum, rank, strict=True)])
    idx = np.minimum(idx, len(bounds) - 1)
    finite = bounds[np.isfinite(bounds)]
    upper = np.where(np.isfinite(bounds[idx]), bounds[idx], finite[-1] if finite.size else np.nan)
    lower = np.where(idx > 0, bounds[np.maximum(idx - 1, 0)], 0.0)
    lower = np.where(np.isfinite(lower), lower, upper)
    below = np.where(idx > 0, cum[np.arange(len(idx)), np.maximum(idx - 1, 0)], 0.0)
    inside = counts[np.arange(len(idx)), idx]
    frac = np.divide(rank - below, inside, out=np.ones_like(rank), where=inside > 0)
    out = lower + (upper - lower) * np.clip(frac, 0, 1)
    out = np.where(np.isfinite(bounds[idx]), out, upper)
    return np.where(total > 0, out, np.nan)


def window_sum(counts: np.ndarray, width: int) -> np.ndarray:
    """Return counts summed over the last ``width`` windows (rolling, same length)."""
    if width <= 1:
        return counts
    csum = np.cumsum(np.vstack([np.zeros((1, counts.shape[1])), counts]), axis=0)
    lo = np.maximum(np.arange(1, counts.shape[0] + 1) - width, 0)
    return csum[1:] - csum[lo]
