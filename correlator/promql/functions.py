"""Prometheus' rate, irate and bucket-quantile arithmetic, as in prometheus/promql/functions.go.

Timestamps are unix milliseconds (int64), as Prometheus keeps them, so windows compare exactly.
"""

from __future__ import annotations

import math

import numpy as np


def window_rates(
    ts: np.ndarray, values: np.ndarray, starts: np.ndarray, ends: np.ndarray, func: str
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``func`` (rate, increase, delta or irate) of each window [starts[i], ends[i]].

    Returns the values and whether each window has one (two samples or more). rate and
    increase are Prometheus 2.x ``extrapolatedRate``: counter resets add the value before
    the drop; the result is extrapolated to each edge of the window when the first/last
    sample lies within 1.1 average intervals of it, else by half an interval, never below
    zero, by one factor (as Prometheus multiplies); delta the same for a gauge (no resets, no
    floor). irate is the per-second change between
    the last two samples (a drop: a reset, the last value). All windows at once, as arrays.
    """
    count = starts.size
    if ts.size < 2:
        return np.full(count, np.nan), np.zeros(count, dtype=bool)
    lo = np.searchsorted(ts, starts, side="left")
    hi = np.searchsorted(ts, ends, side="right")
    present = hi - lo >= 2
    last_i = np.clip(hi - 1, 0, ts.size - 1)
    last, last_t = values[last_i], ts[last_i]
    with np.errstate(all="ignore"):
        if func == "irate":
            before_i = np.clip(hi - 2, 0, ts.size - 1)
            previous, gap = values[before_i], last_t - ts[before_i]
            present &= gap != 0
            change = np.where(last < previous, last, last - previous)
            return np.where(present, change / (gap / 1000), np.nan), present
        first_i = np.clip(lo, 0, ts.size - 1)
        first, first_t = values[first_i], ts[first_i]
        counter = func != "delta"  # delta: a gauge's change, no resets, may go below zero
        result = last - first
        if counter:
            result = result + _resets(values, lo, hi, present)
        to_start = (first_t - starts) / 1000
        to_end = (ends - last_t) / 1000
        sampled = (last_t - first_t) / 1000
        average = sampled / (hi - lo - 1)
        to_zero = sampled * (first / result)
        from_zero = counter & (result > 0) & (first >= 0) & (to_zero < to_start)
        to_start = np.where(from_zero, to_zero, to_start)
        threshold = average * 1.1
        interval = sampled + np.where(to_start < threshold, to_start, average / 2)
        interval = interval + np.where(to_end < threshold, to_end, average / 2)
        factor = interval / sampled
        if func == "rate":
            factor = factor / ((ends - starts) / 1000)
        return np.where(present, result * factor, np.nan), present


def _resets(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Return each window's counter correction: the value before every drop, summed in order."""
    drop = np.zeros(values.size, dtype=bool)
    drop[1:] = values[1:] < values[:-1]
    before = np.concatenate([[0], np.cumsum(drop)])  # drops at indices below k
    out = np.zeros(lo.size)
    for i in np.flatnonzero(present & (before[hi] > before[np.minimum(lo + 1, values.size)])):
        window = slice(lo[i] + 1, hi[i])
        out[i] = np.cumsum(values[lo[i] : hi[i] - 1][drop[window]])[-1]  # Go's order of adds
    return out


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """Return the φ-quantile of cumulative (upper bound, count) buckets, as bucketQuantile.

    Needs a +Inf bucket; equal bounds are merged, counts forced monotonic, and the rank is
    interpolated linearly inside its bucket (the lowest bucket starts at 0 unless its bound
    is not positive; a rank in the +Inf bucket answers the highest finite bound).
    """
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    ordered = sorted(buckets, key=lambda b: b[0])
    if not ordered or ordered[-1][0] != math.inf:
        return math.nan
    merged: list[list[float]] = []
    for bound, count in ordered:
        if merged and merged[-1][0] == bound:
            merged[-1][1] += count
        else:
            merged.append([bound, count])
    highest = -math.inf
    for bucket in merged:  # ensureMonotonic
        if bucket[1] > highest:
            highest = bucket[1]
        elif bucket[1] < highest:
            bucket[1] = highest
    if len(merged) < 2:
        return math.nan
    observations = merged[-1][1]
    if observations == 0:
        return math.nan
    rank = q * observations
    b = next((i for i in range(len(merged) - 1) if merged[i][1] >= rank), len(merged) - 1)
    if b == len(merged) - 1:
        return merged[-2][0]
    if b == 0 and merged[0][0] <= 0:
        return merged[0][0]
    start, end, count = 0.0, merged[b][0], merged[b][1]
    if b > 0:
        start = merged[b - 1][0]
        count -= merged[b - 1][1]
        rank -= merged[b - 1][1]
    return start + (end - start) * _divide(rank, count)


def _divide(a: float, b: float) -> float:
    """Return a / b as Go's float64 division answers it (x/0: ±Inf, 0/0: NaN)."""
    if b == 0:
        return (
            math.nan
            if a == 0 or math.isnan(a)
            else math.copysign(math.inf, a) * math.copysign(1, b)
        )
    return a / b
