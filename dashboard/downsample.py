"""Server-side downsampling: min-max per time bin, so spikes survive."""

from __future__ import annotations

import numpy as np


def minmax(ts: np.ndarray, values: np.ndarray, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """Return at most n_out points keeping each bin's min and max, in time order."""
    finite = np.isfinite(values)
    if not finite.all():
        ts, values = ts[finite], values[finite]
    if ts.size <= n_out or n_out < 4:
        return ts, values
    n_bins = n_out // 2
    edges = np.linspace(ts[0], ts[-1], n_bins + 1)
    bins = np.clip(np.searchsorted(edges, ts, side="right") - 1, 0, n_bins - 1)
    order = np.lexsort((values, bins))  # by bin, then value
    sorted_bins = bins[order]
    first = np.r_[True, sorted_bins[1:] != sorted_bins[:-1]]
    last = np.r_[sorted_bins[1:] != sorted_bins[:-1], True]
    keep = np.unique(np.concatenate([order[first], order[last]]))
    return ts[keep], values[keep]


def minmax_grid(
    ts: np.ndarray, values: np.ndarray, start: float, end: float, n_out: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return each window bin's extremes, in time order, on a uniform grid (NaN where empty).

    Every series reduced over the same window shares the grid, so the browser needs no
    x values at all (``x0``/``dx``); keeping min and max per bin keeps the spikes.
    """
    n_bins = max(1, n_out // 2)
    width = (end - start) / n_bins
    grid = start + width * (np.arange(2 * n_bins) + 0.5) / 2
    out = np.full(2 * n_bins, np.nan)
    keep = np.isfinite(values) & (ts >= start) & (ts <= end)
    ts, values = ts[keep], values[keep]
    if ts.size == 0 or width <= 0:
        return grid, out
    bins = np.clip(((ts - start) / width).astype(np.int64), 0, n_bins - 1)
    order = np.lexsort((values, bins))
    sorted_bins = bins[order]
    first = np.r_[True, sorted_bins[1:] != sorted_bins[:-1]]
    last = np.r_[sorted_bins[1:] != sorted_bins[:-1], True]
    lo, hi = order[first], order[last]
    used = sorted_bins[first]
    early, late = np.minimum(lo, hi), np.maximum(lo, hi)
    out[2 * used] = values[early]
    out[2 * used + 1] = values[late]
    return grid, out
