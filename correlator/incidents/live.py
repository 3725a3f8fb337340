"""Decide from recent samples whether an SLA is in breach now, or has recovered."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from correlator.analysis.breach import aggregate, wrong_side
from correlator.analysis.timeline import align, choose_grid, choose_step
from correlator.bundle import Series
from correlator.vocabulary import DEFAULT_AGGREGATE


@dataclass(frozen=True, slots=True)
class SlaState:
    """The SLA's state at the newest sample: breaching since ``start``, or ``ok``."""

    breaching: bool
    start: float | None = None
    last_ts: float | None = None
    last_value: float | None = None
    ok_since: float | None = None

    @property
    def known(self) -> bool:
        """Say whether there was any data to judge."""
        return self.last_ts is not None


def sla_state(series: list[Series], sla: dict) -> SlaState:
    """Return whether the SLA's aggregate has been on the wrong side for ``for_seconds``."""
    series = [s for s in series if s.ts.size]
    if not series or sla.get("op") not in (">", "<") or sla.get("threshold") is None:
        return SlaState(False)
    grid = choose_grid(series, choose_step(series))
    agg = aggregate(align(series, grid), sla.get("aggregate") or DEFAULT_AGGREGATE)
    present = np.isfinite(agg)
    if not present.any():
        return SlaState(False)
    t, v = grid.times[present], agg[present]
    bad = wrong_side(v, sla["op"], float(sla["threshold"]))
    last_ts, last_value = float(t[-1]), float(v[-1])
    if not bad[-1]:
        wrong = np.flatnonzero(bad)
        first_ok = float(t[wrong[-1] + 1]) if wrong.size else float(t[0])
        return SlaState(False, last_ts=last_ts, last_value=last_value, ok_since=first_ok)
    good = np.flatnonzero(~bad)
    run = good[-1] + 1 if good.size else 0
    run_start = t[run]
    hold = float(sla.get("for_seconds") or 0)
    if last_ts - run_start < hold:
        return SlaState(False, last_ts=last_ts, last_value=last_value)
    first = int(np.flatnonzero(t[run:] - run_start >= hold)[0]) + run
    return SlaState(True, start=float(t[first]), last_ts=last_ts, last_value=last_value)
