"""Min-max downsampling: at most two points per step, so spikes survive."""

from __future__ import annotations

import numpy as np


def minmax(ts: np.ndarray, values: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Keep each step bucket's lowest and highest sample (in time order); NaN buckets drop."""
    if step <= 0 or ts.size <= 2:
        return ts, values
    finite = ~np.isnan(values)
    ts, values = ts[finite], values[finite]
    if ts.size <= 2:
        return ts, values
    bucket = np.floor(ts / step).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    if starts.size * 2 >= ts.size:
        return ts, values
    ends = np.r_[starts[1:], ts.size]
    # Index of min and max within each bucket via a stable sort by (bucket, value).
    order = np.lexsort((values, bucket))
    lo = order[starts]
    hi = order[ends - 1]
    keep = np.unique(np.concatenate([lo, hi]))
    return ts[keep], values[keep]
