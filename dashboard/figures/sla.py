"""SLA breaches found in series, as time intervals."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from dashboard.client import FetchedSeries

AGGREGATES: dict[str, Callable[..., np.ndarray]] = {
    "max": np.nanmax,
    "min": np.nanmin,
    "mean": np.nanmean,
    "sum": np.nansum,
}


def sla_matches(sla: dict, s: FetchedSeries) -> bool:
    """Return whether a series is one the SLA watches."""
    want = sla.get("labels", {})
    return s.name == sla.get("metric") and all(s.labels.get(k) == v for k, v in want.items())


def aggregate(series: list[FetchedSeries], how: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the SLA's aggregate over series, on the union of their timestamps."""
    if not series:
        return np.array([]), np.array([])
    ts = np.unique(np.concatenate([s.ts for s in series]))
    stack = np.vstack(
        [np.interp(ts, s.ts, s.values, left=np.nan, right=np.nan) for s in series if s.ts.size]
    )
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return ts, AGGREGATES.get(how, np.nanmax)(stack, axis=0)


def breach_intervals(sla: dict, series: list[FetchedSeries]) -> list[tuple[float, float]]:
    """Return [start, end] of each breach: wrong side of the threshold for for_seconds."""
    if sla.get("threshold") is None or sla.get("op") not in (">", "<"):
        return []
    ts, agg = aggregate([s for s in series if sla_matches(sla, s)], sla.get("aggregate", "max"))
    if ts.size == 0:
        return []
    bad = agg > sla["threshold"] if sla["op"] == ">" else agg < sla["threshold"]
    hold = float(sla.get("for_seconds") or 0)
    edges = np.diff(np.r_[0, bad.astype(np.int8), 0])
    out = []
    for i, j in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        start, end = ts[i], ts[j - 1]
        if end - start >= hold:
            out.append((float(start + hold), float(end)))
    return out
