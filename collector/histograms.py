"""Quantiles and re-bucketing of cumulative Prometheus histogram buckets."""

from __future__ import annotations

import math


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """Return the q-quantile of ``(le, cumulative count)`` buckets, like ``histogram_quantile``."""
    buckets = sorted(buckets)
    if not buckets or not math.isinf(buckets[-1][0]):
        return None
    total = buckets[-1][1]
    if total <= 0:
        return None
    rank = q * total
    prev_le, prev_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if math.isinf(le):
                return prev_le
            if count == prev_count:
                return le
            return prev_le + (le - prev_le) * (rank - prev_count) / (count - prev_count)
        prev_le, prev_count = le, count
    return buckets[-2][0] if len(buckets) > 1 else None


def cumulative_at(bound: float, buckets: list[tuple[float, float]]) -> float:
    """Return the cumulative count at ``bound``, interpolating linearly inside a bucket."""
    prev_le, prev_count = 0.0, 0.0
    for le, count in sorted(buckets):
        if bound <= le:
            if math.isinf(le) or le == prev_le:
                return prev_count if math.isinf(le) else count
            return prev_count + (count - prev_count) * (bound - prev_le) / (le - prev_le)
        prev_le, prev_count = le, count
    return prev_count


def rebucket(bounds: tuple[float, ...], buckets: list[tuple[float, float]]) -> list[float]:
    """Return cumulative counts at ``bounds`` plus ``+Inf`` from another bucket layout."""
    total = max((c for le, c in buckets if math.isinf(le)), default=0.0)
    return [cumulative_at(b, buckets) for b in bounds] + [total]
