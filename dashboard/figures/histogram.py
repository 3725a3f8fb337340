"""Distribution drift from cumulative Prometheus histogram counters."""

from __future__ import annotations

import numpy as np

from dashboard.client import FetchedSeries

EPS = 1e-4


def _le(text: str) -> float:
    return float("inf") if text.strip() in ("+Inf", "Inf", "inf") else float(text)


def group_buckets(series: list[FetchedSeries]) -> dict[tuple, list[FetchedSeries]]:
    """Group ``*_bucket`` series by name and labels other than ``le``, buckets sorted."""
    groups: dict[tuple, list[FetchedSeries]] = {}
    for s in series:
        if "le" in s.labels:
            rest = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            groups.setdefault((s.name, rest), []).append(s)
    return {k: sorted(v, key=lambda s: _le(s.labels["le"])) for k, v in groups.items()}


def window_counts(parts: list[FetchedSeries], edges: np.ndarray) -> np.ndarray:
    """Return per-window, per-bucket counts (window x bucket) between the time edges."""
    cumulative = np.stack(
        [np.interp(edges, p.ts, np.maximum.accumulate(np.nan_to_num(p.values))) for p in parts],
        axis=1,
    )  # edge x bucket, cumulative over time and over buckets
    cumulative = np.maximum.accumulate(cumulative, axis=1)
    per_window = np.clip(np.diff(cumulative, axis=0), 0, None)
    return np.clip(np.diff(per_window, axis=1, prepend=0.0), 0, None)


def psi(counts: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Return the population stability index of each row of counts against a reference."""
    cur = counts / np.maximum(counts.sum(axis=1, keepdims=True), EPS)
    ref = reference / max(reference.sum(), EPS)
    cur, ref = np.clip(cur, EPS, None), np.clip(ref, EPS, None)
    return ((cur - ref) * np.log(cur / ref)).sum(axis=1)


def drift_series(series: list[FetchedSeries], *, windows: int = 240) -> list[FetchedSeries]:
    """Return one PSI series per histogram: each window against the first quarter."""
    out = []
    for (name, rest), parts in group_buckets(series).items():
        t0 = max(p.ts[0] for p in parts if p.ts.size)
        t1 = min(p.ts[-1] for p in parts if p.ts.size)
        step = float(np.median(np.diff(parts[0].ts))) if parts[0].ts.size > 1 else 0.0
        n = int(min(windows, (t1 - t0) // step)) if step > 0 else 0
        if n < 4:
            continue
        edges = np.linspace(t0, t1, n + 1)
        counts = window_counts(parts, edges)
        reference = counts[: max(1, n // 4)].sum(axis=0)
        values = psi(counts, reference)
        values[counts.sum(axis=1) <= 0] = np.nan
        mids = (edges[:-1] + edges[1:]) / 2
        out.append(FetchedSeries(name.removesuffix("_bucket") + "_psi", dict(rest), mids, values))
    return out
