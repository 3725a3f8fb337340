"""Turn Prometheus range-query results into vocabulary series (no I/O)."""

from __future__ import annotations

import numpy as np

from correlator.bundle import Series
from correlator.promsource.mapping import MetricRule


def _key(labels: dict[str, str]) -> tuple:
    return tuple(sorted(labels.items()))


def series_from_result(result: list[dict], rule: MetricRule) -> list[Series]:
    """Convert one ``data.result`` matrix through a rule: name, labels and scale."""
    out = []
    for item in result:
        labels = rule.convert_labels(dict(item.get("metric") or {}))
        pairs = item.get("values") or []
        ts = np.fromiter((float(p[0]) for p in pairs), np.float64, len(pairs))
        values = np.array([float(p[1]) for p in pairs], dtype=np.float64)
        if rule.scale != 1.0:
            values = values * rule.scale
        out.append(Series(name=rule.metric, labels=labels, ts=ts, values=values))
    return merge_series(out)


def merge_series(parts: list[Series]) -> list[Series]:
    """Join pieces of the same series (chunks, or results folded by label rules) in time order."""
    groups: dict[tuple, list[Series]] = {}
    for s in parts:
        groups.setdefault((s.name, _key(s.labels)), []).append(s)
    merged = []
    for (name, key), pieces in groups.items():
        ts = np.concatenate([p.ts for p in pieces]) if pieces else np.empty(0)
        values = np.concatenate([p.values for p in pieces]) if pieces else np.empty(0)
        order = np.argsort(ts, kind="stable")
        ts, values = ts[order], values[order]
        keep = np.concatenate(([True], np.diff(ts) > 0)) if ts.size else np.empty(0, bool)
        merged.append(Series(name=name, labels=dict(key), ts=ts[keep], values=values[keep]))
    return sorted(merged, key=lambda s: (s.name, _key(s.labels)))
