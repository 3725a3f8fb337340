"""Kinds of ranked signal: what rows each builds, how they are measured, how they are told.

``Config.kinds`` lists the kinds an analysis uses. ``VALUE`` and ``RATE`` take the plain
series (a counter becomes its rate); a kind with ``build`` first takes the series it claims
and makes rows of its own, as ``drift_signal.DRIFT`` does from histogram buckets. To add a
kind: a module defining its ``SignalKind``, and its name in ``Config.kinds``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from correlator.analysis.timeline import Grid
from correlator.bundle import Series


@dataclass(frozen=True, slots=True)
class BuildContext:
    """What a kind's ``build`` may use beside the series."""

    grid: Grid
    ref_cols: slice  # the reference's grid columns
    window: int  # grid columns a windowed figure (a histogram's counts) sums
    references: dict[tuple, object] = field(default_factory=dict)  # a baseline's, by row key


@dataclass(frozen=True, slots=True)
class KindRow:
    """One row a kind built: its identity, its values on the grid, and what its evidence needs.

    A payload with a ``reference`` attribute hands that reference to the incident's build
    when the row comes from a separately recorded baseline (``BuildContext.references``).
    """

    name: str
    labels: dict[str, str]
    values: np.ndarray
    payload: object = None


@dataclass(frozen=True, slots=True)
class Told:
    """What a kind's ``evidence`` gets for one suspect row."""

    name: str
    labels: dict[str, str]
    payload: object
    peak: int  # grid column of the row's strongest excursion
    window: int  # as in ``BuildContext``
    onset: float  # unix seconds
    lead: float  # seconds from onset to the breach start


Build = Callable[[Sequence[Series], BuildContext], tuple[set[int], list[KindRow]]]


@dataclass(frozen=True, slots=True)
class SignalKind:
    """One kind of ranked signal; the defaults are those of a plain series."""

    name: str
    # Return the positions of the series taken and the rows built from them; None: plain.
    build: Build | None = None
    # A rise or a fall hurts one way; False for a distance, which has no way (drift).
    directional: bool = True
    # At level zero the unit gives the least spread (``units.zero_floors``).
    level_floors: bool = True
    # A slow ramp begun inside the reference is looked for (``ramps``).
    ramps: bool = True
    # A move of ``alarm`` is out of range whatever the row's own noise (its least meaningful
    # move); a move of ``full`` has full severity. None: the row's noise and ``Config.full_z``.
    alarm: float | None = None
    full: float | None = None
    # Values are a counter's rate: told per second.
    per_second: bool = False
    # A value sums or averages the interval since the sample before (a counter's rate).
    interval: bool = False
    # Return the suspect's evidence sentence and any figures to add to it; None: the plain one.
    evidence: Callable[[Told], tuple[str, dict]] | None = None


VALUE = SignalKind("value")
RATE = SignalKind("rate", per_second=True, interval=True)


def by_name(kinds: Sequence[SignalKind]) -> dict[str, SignalKind]:
    """Return the kinds keyed by name; a name given twice is an error."""
    out = {k.name: k for k in kinds}
    if len(out) != len(kinds):
        raise ValueError(f"signal kinds named twice: {[k.name for k in kinds]}")
    if not {"value", "rate"} <= out.keys():
        raise ValueError("the signal kinds must include value and rate (plain series)")
    return out
