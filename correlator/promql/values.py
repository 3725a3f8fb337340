"""What a PromQL evaluation holds: stored series, result series, range windows, bounds.

A value is a scalar (a float array over the steps) or a vector: series (``Vec``), each with
its labels, its values over the steps and the steps it has one at.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from correlator.selector import Selector

NAME = "__name__"


class EvalError(ValueError):
    """A query that parsed but cannot be evaluated (Prometheus' ``execution`` error)."""


@dataclass(slots=True)
class Raw:
    """One stored series: labels with ``__name__``, timestamps (ms, sorted) and values."""

    labels: dict[str, str]
    ts: np.ndarray
    values: np.ndarray
    # Which samples are staleness markers; None: the NaN ones (the store holds no other NaN).
    stale: np.ndarray | None = None

    def markers(self) -> np.ndarray:
        """Return which samples are staleness markers."""
        return np.isnan(self.values) if self.stale is None else self.stale

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the timestamps and values without staleness markers."""
        keep = ~self.markers()
        return (self.ts, self.values) if keep.all() else (self.ts[keep], self.values[keep])


@dataclass(slots=True)
class Vec:
    """One output series over the steps: values, and whether each step has one."""

    labels: dict[str, str]
    values: np.ndarray
    present: np.ndarray


@dataclass(slots=True)
class Windows:
    """A range vector: series (staleness markers left out) and each step's window [start, end]."""

    series: list[Raw]
    starts: np.ndarray
    ends: np.ndarray


Fetch = Callable[[Selector, int, int], list[Raw]]
Tick = Callable[[], None]
Value = list[Vec] | np.ndarray  # a vector per step, or a scalar per step


@dataclass(slots=True)
class Context:
    """What every node of one evaluation shares: the reads, the deadline and the bounds."""

    fetch: Fetch
    tick: Tick
    start_ms: int  # the query's first and last step, for @ start() and @ end()
    end_ms: int
    max_points: int | None = None  # series x steps the selectors may hold, together
    points: int = 0

    def hold(self, series: int, steps: int) -> None:
        """Count series read at steps against the bound; EvalError past it."""
        self.points += series * steps
        if self.max_points is not None and self.points > self.max_points:
            raise EvalError(
                f"{series} series at {steps} steps would hold more than "
                f"{self.max_points:,} points: narrow the selector or raise step"
            )


def without_name(labels: dict[str, str]) -> dict[str, str]:
    """Return the labels less the metric name."""
    return {k: v for k, v in labels.items() if k != NAME}


def label_key(labels: dict[str, str]) -> tuple:
    """Return labels as a sortable, hashable key (Prometheus' label order)."""
    return tuple(sorted(labels.items()))


def vector_of(value: Value, what: str) -> list[Vec]:
    """Return a vector argument; EvalError when it is a scalar."""
    if isinstance(value, np.ndarray):
        raise EvalError(f"expected an instant vector in {what}, got a scalar")
    return value
