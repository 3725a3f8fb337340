"""Anomaly of each series against its own reference: robust z, onset, size and persistence."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)
class Reference:
    """Per-series normal level and spread (robust), with how many points they rest on."""

    median: np.ndarray
    scale: np.ndarray  # spread above the median (and below it unless ``lower`` is set)
    count: np.ndarray
    lower: np.ndarray | None = None  # spread below the median, when it differs


@dataclass(slots=True)
class Anomalies:
    """Per-series anomaly features around the breach (arrays of one value per series)."""

    z: np.ndarray  # signed robust z (series x time)
    direction: np.ndarray  # +1 above normal, -1 below
    strength: np.ndarray  # peak |z| in the active window
    peak: np.ndarray  # grid index of that peak
    onset: np.ndarray  # grid index where the excursion that holds the peak began
    persistence: np.ndarray  # share of points from onset to the window's end that stay out
    censored: np.ndarray  # the excursion was already out before ``lo``: its onset is unseen


def reference(matrix: np.ndarray, *, rel_floor: float, abs_floor: float) -> Reference:
    """Return median and robust spread per row: max of MAD, IQR and a level floor / sqrt(points)."""
    count = np.isfinite(matrix).sum(axis=1)
    out_med = np.full(matrix.shape[0], np.nan)
    out_scale = np.full(matrix.shape[0], np.nan)
    ok = count > 0
    if ok.any():
        m = matrix[ok]
        full = np.isfinite(m).all(axis=1)
        q25, med, q75 = (np.empty(m.shape[0]) for _ in range(3))
        mad = np.empty(m.shape[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for rows, pct, median in (
                (full, np.percentile, np.median),
                (~full, np.nanpercentile, np.nanmedian),
            ):
                if rows.any():
                    q = pct(m[rows], [25, 50, 75], axis=1)
                    q25[rows], med[rows], q75[rows] = q
                    mad[rows] = median(np.abs(m[rows] - q[1][:, None]), axis=1)
            std = np.nanstd(m, axis=1)
        out_med[ok] = med
        # A quarter of the standard deviation keeps mostly-flat series with rare spikes sane.
        out_scale[ok] = np.maximum.reduce(
            [
                1.4826 * mad,
                (q75 - q25) / 1.349,
                0.25 * std,
                rel_floor * np.abs(med) / np.sqrt(count[ok]),
                np.full(med.shape, abs_floor),
            ]
        )
    return Reference(out_med, out_scale, count)


def widen_to_band(ref: Reference, matrix: np.ndarray, *, q: float, off: float) -> Reference:
    """Widen each side's spread so the reference's q-th and (100-q)-th percentiles sit at ``off``.

    A long normal period shows its own tails (rare bursts, a few slow requests): a value
    inside them is not an anomaly, however small the median spread is.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(matrix, [100.0 - q, q], axis=1)
    up = np.nan_to_num((hi - ref.median) / off, nan=0.0)
    down = np.nan_to_num((ref.median - lo) / off, nan=0.0)
    base_lo = ref.scale if ref.lower is None else ref.lower
    return Reference(ref.median, np.fmax(ref.scale, up), ref.count, np.fmax(base_lo, down))


def robust_z(matrix: np.ndarray, ref: Reference, *, cap: float = 1e3) -> np.ndarray:
    """Return (x - median) / spread per point (the side's spread), capped to +-cap."""
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = matrix - ref.median[:, None]
        z = dev / ref.scale[:, None]
        if ref.lower is not None:
            z = np.where(dev < 0, dev / ref.lower[:, None], z)
    return np.clip(z, -cap, cap)


def detect(
    z: np.ndarray,
    *,
    lo: int | np.ndarray,
    active: tuple[int, int],
    off: float,
) -> Anomalies:
    """Find each series' strongest excursion in the active window and walk back to its onset.

    The onset is the first point after the last one (not before ``lo``) where the
    z was back within ``off``; missing points neither start nor end an excursion. An
    excursion whose last normal point lies before ``lo``, or that holds the first point,
    has no seen onset (``censored``).
    """
    n, size = z.shape
    a0, a1 = max(active[0], 0), min(active[1], size - 1)
    win = z[:, a0 : a1 + 1]
    absw = np.where(np.isfinite(win), np.abs(win), -1.0)
    peak = a0 + np.argmax(absw, axis=1)
    rows = np.arange(n)
    peak_val = z[rows, peak]
    direction = np.where(peak_val < 0, -1.0, 1.0)
    strength = np.where(np.isfinite(peak_val), np.abs(peak_val), 0.0)
    signed = z * direction[:, None]
    idx = np.arange(size)
    inside = np.where(np.isfinite(signed), signed <= off, False)
    last_in = np.maximum.accumulate(np.where(inside, idx, -1), axis=1)
    began = last_in[rows, peak] + 1
    onset = np.minimum(np.maximum(began, lo), peak)
    censored = (began < lo) | (onset == 0)
    out_mask = np.where(np.isfinite(signed), signed > off, np.nan)
    span = (idx[None, :] >= onset[:, None]) & (idx[None, :] <= a1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        persistence = np.nanmean(np.where(span, out_mask, np.nan), axis=1)
    persistence = np.nan_to_num(persistence, nan=0.0)
    return Anomalies(z, direction, strength, peak, onset, persistence, censored)


def floor_at_zero(ref: Reference, floor: np.ndarray, *, zero: float) -> None:
    """Raise, in place, the spread of each row at level zero (|median| <= ``zero``) to ``floor``."""
    at_zero = np.abs(np.nan_to_num(ref.median)) <= zero
    ref.scale = np.where(at_zero, np.fmax(ref.scale, floor), ref.scale)
    if ref.lower is not None:
        ref.lower = np.where(at_zero, np.fmax(ref.lower, floor), ref.lower)
