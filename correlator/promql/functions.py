"""Prometheus' rate, irate and bucket-quantile arithmetic, as in prometheus/promql/functions.go.

Timestamps are unix milliseconds (int64), as Prometheus keeps them, so windows compare exactly.
"""

from __future__ import annotations

import math

import numpy as np


def extrapolated_rate(
    ts: np.ndarray,
    values: np.ndarray,
    range_start: int,
    range_end: int,
    *,
    is_counter: bool,
    is_rate: bool,
) -> float | None:
    """Return rate/increase/delta of the samples in [range_start, range_end]; None: no result.

    Prometheus 2.x ``extrapolatedRate``: counter resets add the value before the drop; the
    result is extrapolated to each edge of the range when the first/last sample lies within
    1.1 average intervals of it, else by half an interval; a counter is not extrapolated
    below zero.
    """
    n = len(values)
    if n < 2:
        return None
    first, last = float(values[0]), float(values[-1])
    result = last - first
    if is_counter:
        drops = values[1:] < values[:-1]
        result += float(values[:-1][drops].sum())
    first_t, last_t = int(ts[0]), int(ts[-1])
    to_start = (first_t - range_start) / 1000
    to_end = (range_end - last_t) / 1000
    sampled = (last_t - first_t) / 1000
    average = sampled / (n - 1)
    if is_counter and result > 0 and first >= 0:
        to_zero = sampled * (first / result)
        to_start = min(to_start, to_zero)
    threshold = average * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else average / 2
    interval += to_end if to_end < threshold else average / 2
    result *= interval / sampled
    if is_rate:
        result /= (range_end - range_start) / 1000
    return result


def instant_rate(ts: np.ndarray, values: np.ndarray) -> float | None:
    """Return irate: the per-second change between the last two samples (a drop: a reset)."""
    if len(values) < 2:
        return None
    last, previous = float(values[-1]), float(values[-2])
    change = last if last < previous else last - previous
    interval = int(ts[-1]) - int(ts[-2])
    if interval == 0:
        return None
    return change / (interval / 1000)


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
    return start + (end - start) * (rank / count)
