"""The rows the ranking scores: plain series (counters as rates) and rows of other kinds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from correlator.analysis.kinds import BuildContext, KindRow, SignalKind
from correlator.analysis.timeline import Grid, align, is_counter, merge_label_changes
from correlator.bundle import Series


@dataclass(slots=True)
class Signals:
    """Parallel per-row facts plus the (row x grid) value matrix."""

    names: list[str]
    labels: list[dict[str, str]]
    kinds: list[str]  # a ``SignalKind`` name: "value", "rate" (a counter's), "drift"...
    matrix: np.ndarray
    payload: dict[int, object] = field(default_factory=dict)  # what a row's kind keeps
    window: int = 1  # grid columns a windowed figure (a histogram's counts) sums

    def key(self, row: int) -> tuple:
        """Return the identity of a row: name and sorted labels."""
        return (self.names[row], tuple(sorted(self.labels[row].items())))

    def identity(self, row: int) -> tuple:
        """Return a row's kind, then its ``key``: what orders rows of equal score."""
        return (self.kinds[row], *self.key(row))

    def references(self) -> dict[tuple, object]:
        """Return the references rows keep in their payload (a histogram's), by row key."""
        found = {i: getattr(p, "reference", None) for i, p in self.payload.items()}
        return {self.key(i): r for i, r in found.items() if r is not None}


def window_columns(seconds: float, step: float) -> int:
    """Return the grid columns (at least one) that a window of ``seconds`` spans."""
    return max(1, round(seconds / step))


def build(
    series: list[Series],
    grid: Grid,
    *,
    kinds: Sequence[SignalKind],
    ref_cols: slice,
    references: dict[tuple, object] | None = None,
    window: int = 1,
    volatile: tuple[str, ...] = ("version",),
) -> Signals:
    """Return the signals on the grid: each kind with a ``build`` takes its series first.

    Rows of those kinds measure against ``references`` (a baseline's), else ``ref_cols``.
    """
    series = merge_label_changes(series, volatile)
    ctx = BuildContext(grid, ref_cols, window, references or {})
    taken: set[int] = set()
    built: list[tuple[str, KindRow]] = []
    for kind in kinds:
        if kind.build is not None:
            took, rows = kind.build(series, ctx)
            taken |= took
            built.extend((kind.name, row) for row in rows)
    plain = [s for i, s in enumerate(series) if i not in taken]
    matrix = align(plain, grid)
    names = [s.name for s in plain]
    labels = [s.labels for s in plain]
    kind_of = ["rate" if is_counter(s.name, s.values) else "value" for s in plain]
    payload: dict[int, object] = {}
    for name, row in built:
        if row.payload is not None:
            payload[len(names)] = row.payload
        names.append(row.name)
        labels.append(row.labels)
        kind_of.append(name)
    if built:
        values = np.array([row.values for _, row in built])
        matrix = np.vstack([matrix, values]) if matrix.size else values
    matrix = matrix.reshape(len(names), grid.size)
    return Signals(names, labels, kind_of, matrix, payload, window)
