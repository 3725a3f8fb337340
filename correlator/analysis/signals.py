"""The rows the ranking scores: plain series (counters as rates) and histogram drift."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from correlator.analysis import drift, histogram
from correlator.analysis.timeline import Grid, align, is_counter, merge_label_changes
from correlator.bundle import Series


@dataclass(slots=True)
class Signals:
    """Parallel per-row facts plus the (row x grid) value matrix."""

    names: list[str]
    labels: list[dict[str, str]]
    kinds: list[str]  # "value", "rate" (from a counter) or "drift" (PSI of a histogram)
    matrix: np.ndarray
    hists: dict[int, histogram.Histogram] = field(default_factory=dict)
    ref_counts: dict[int, np.ndarray] = field(default_factory=dict)

    def key(self, row: int) -> tuple:
        """Return the identity of a row: name and sorted labels."""
        return (self.names[row], tuple(sorted(self.labels[row].items())))

    def identity(self, row: int) -> tuple:
        """Return a row's kind, then its ``key``: what orders rows of equal score."""
        return (self.kinds[row], *self.key(row))


def _histogram_family(series: list[Series]) -> set[str]:
    return {s.name[: -len("_bucket")] for s in series if s.name.endswith("_bucket")}


def build(
    series: list[Series],
    grid: Grid,
    *,
    ref_cols: slice,
    ref_dists: dict[tuple, np.ndarray] | None = None,
    window: int = 1,
    volatile: tuple[str, ...] = ("version",),
) -> Signals:
    """Return the signals on the grid; drift is against ``ref_dists``, else ``ref_cols``."""
    series = merge_label_changes(series, volatile)
    families = _histogram_family(series)
    groups = histogram.group_buckets(series)
    plain = [
        s
        for s in series
        if not (s.name.endswith("_bucket") and "le" in s.labels)
        and not (s.name.endswith(("_sum", "_count")) and s.name.rsplit("_", 1)[0] in families)
    ]
    rows = align(plain, grid)
    names = [s.name for s in plain]
    labels = [s.labels for s in plain]
    kinds = ["rate" if is_counter(s.name, s.values) else "value" for s in plain]
    drift_rows, hists, refs = [], {}, {}
    for (name, rest), parts in groups.items():
        h = histogram.build(parts, grid, name=name, labels=dict(rest))
        counts = histogram.window_sum(h.counts, window)
        key = (name, rest)
        ref = ref_dists.get(key) if ref_dists else None
        if ref is None or ref.shape[-1] != counts.shape[1]:
            ref = h.counts[ref_cols].sum(axis=0)
        row = len(names)
        value = drift.psi(counts, ref)
        value[counts.sum(axis=1) <= 0] = np.nan
        drift_rows.append(value)
        hists[row], refs[row] = h, ref
        names.append(name)
        labels.append(dict(rest))
        kinds.append("drift")
    if drift_rows:
        rows = np.vstack([rows, np.array(drift_rows)]) if rows.size else np.array(drift_rows)
    return Signals(names, labels, kinds, rows.reshape(len(names), grid.size), hists, refs)
