"""The values the analysis stages hand on: align -> measure -> detect -> rank -> explain."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from correlator.analysis.breach import Breach
from correlator.analysis.onset import Anomalies, Reference
from correlator.analysis.ranking import Placement
from correlator.analysis.signals import Signals
from correlator.analysis.timeline import Grid
from correlator.analysis.topology import Topology
from correlator.bundle import Bundle, Series


@dataclass(frozen=True, slots=True)
class Timeline:
    """Stage 1, align: the series with samples on one grid, the breach on it, the topology."""

    bundle: Bundle
    series: list[Series]
    grid: Grid
    breach: Breach
    agg: np.ndarray  # the SLA's aggregate on the grid
    sla_rows: list[int]  # indices of the bundle's series the SLA covers
    graph: Topology


@dataclass(frozen=True, slots=True)
class Window:
    """Grid columns around a found breach: its start and where the reference ends."""

    start: float  # breach start, unix seconds
    breach: int  # grid column of the breach start
    ref_end: int  # the reference is columns [0, ref_end)


@dataclass(slots=True)
class Measured:
    """Stage 2, measure: every signal on the grid and its reference (normal level, spread)."""

    signals: Signals
    ref: Reference  # detect() moves, in place, the reference of a row before its ramp
    has_baseline: bool  # a separately recorded baseline gave reference figures
    on_baseline: np.ndarray  # rows whose reference is the baseline's
    directional: np.ndarray  # rows whose rise or fall hurts one way (not a distance: drift)
    ramps: np.ndarray  # rows whose kind has slow ramps looked for
    interval: np.ndarray  # rows whose value is over the interval before each sample
    floors: np.ndarray  # spread floor of each row at level zero (its unit's step)
    kind_floor: np.ndarray  # spread floor of each row from its kind's alarm level, else 0
    full_z: np.ndarray  # |z| of full severity per row


@dataclass(frozen=True, slots=True)
class Detection:
    """Stage 3, detect: each row's strongest excursion by the breach and when it began."""

    anomalies: Anomalies
    onset_t: np.ndarray  # unix seconds of each row's onset
    lead: np.ndarray  # seconds from onset to breach start (negative: after it)


@dataclass(frozen=True, slots=True)
class Ranking:
    """Stage 4, rank: each row's place in the topology, its weights and base score."""

    place: Placement
    dist: dict[str, int]  # hops from the SLA's nodes along depends-on edges
    callers: dict[str, set[str]]  # the nodes that call each node
    subjects: list[str | None]  # the node each row's labels name first, known or not
    factors: dict[str, np.ndarray]  # the base score's factors by name (``ranking.combine``)
    base: np.ndarray  # score before explanations
    explainer_sev: np.ndarray  # severity of the rows that may explain others, else 0
    inputs: tuple[np.ndarray, np.ndarray]  # call gaps, and the client spans they are made from
