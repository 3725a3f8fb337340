"""Where a slow ramp (a leak, a filling queue) begins, when the reference already holds it."""

from __future__ import annotations

import numpy as np

from correlator.analysis import onset
from correlator.analysis.config import Config


def hinge_starts(
    matrix: np.ndarray, *, lo: int, hi: int, end: int, tries: int = 32, gain: float = 0.6
) -> tuple[np.ndarray, np.ndarray]:
    """Fit each row up to ``end`` as flat, then a straight ramp from a point in [lo, hi).

    Returns (start column, -1 where no fit explains at least ``gain`` of the row's variance
    beyond a flat line; slope sign). Least squares over the finite points, one pass per
    tried start, so a few hundred rows of a day take milliseconds.
    """
    n = matrix.shape[0]
    y = matrix[:, :end]
    w = np.isfinite(y)
    y0 = np.where(w, y, 0.0)
    sw, sy = w.sum(axis=1), y0.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sst = (y0 * y0).sum(axis=1) - sy * sy / sw
        best_sse = np.full(n, np.inf)
        best_c = np.full(n, -1)
        best_slope = np.zeros(n)
        t = np.arange(end, dtype=float)
        for c in np.unique(np.linspace(lo, max(lo, hi - 1), tries).astype(int)):
            x = np.maximum(t - c, 0.0)
            xw = np.where(w, x, 0.0)
            sx, sxx, sxy = xw.sum(axis=1), (xw * x).sum(axis=1), (xw * y0).sum(axis=1)
            den = sw * sxx - sx * sx
            slope = (sw * sxy - sx * sy) / den
            sse = sst - slope * (sxy - sx * sy / sw)
            better = np.isfinite(sse) & (sse < best_sse)
            best_sse = np.where(better, sse, best_sse)
            best_c = np.where(better, c, best_c)
            best_slope = np.where(better, slope, best_slope)
        explained = 1.0 - best_sse / sst
    ok = np.isfinite(explained) & (explained >= gain) & (sw >= 10)
    return np.where(ok, best_c, -1), np.sign(best_slope)


def reference_before(
    ref: onset.Reference, matrix: np.ndarray, rows: np.ndarray, starts: np.ndarray, cfg: Config
) -> None:
    """Recompute, in place, the reference of each row from its points before its ramp."""
    width = int(starts.max())
    part = matrix[rows, :width].copy()
    part[np.arange(width)[None, :] >= starts[:, None]] = np.nan
    again = onset.reference(part, rel_floor=cfg.rel_floor, abs_floor=cfg.abs_floor)
    ref.median[rows], ref.scale[rows], ref.count[rows] = again.median, again.scale, again.count
    if ref.lower is not None:
        ref.lower[rows] = again.scale
