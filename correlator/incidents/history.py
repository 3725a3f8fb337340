"""Breaches in stored history: the latest one of an SLA, declared or found in its series."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from correlator.analysis.breach import aggregate, last_breach
from correlator.analysis.timeline import align, choose_grid, choose_step
from correlator.store.recordings import list_recordings
from correlator.store.windows import MetricSource, sla_series
from correlator.vocabulary import DEFAULT_AGGREGATE

# How far back from the newest sample ``analyze --sla`` looks for the latest breach.
SCAN_S = 7 * 86_400.0


@dataclass(frozen=True, slots=True)
class PastBreach:
    """A breach found in stored data: when it started and where that came from."""

    start: float
    how: str  # "declared" (an imported incident's alert) or "threshold" (found in the series)


def found_in_series(
    engine: Engine,
    sla: dict,
    *,
    start: float,
    end: float,
    source: MetricSource | None = None,
) -> float | None:
    """Return the start of the SLA's last threshold breach in [start, end], or None."""
    if sla.get("op") not in (">", "<") or sla.get("threshold") is None:
        return None
    with engine.connect() as conn:
        series = [
            s
            for s in sla_series(conn=conn, sla=sla, start=start, end=end, source=source)
            if s.ts.size
        ]
    if not series:
        return None
    grid = choose_grid(series, choose_step(series))
    agg = aggregate(align(series, grid), sla.get("aggregate") or DEFAULT_AGGREGATE)
    return last_breach(
        grid.times,
        agg,
        op=sla["op"],
        threshold=float(sla["threshold"]),
        for_seconds=float(sla.get("for_seconds") or 0),
    )


def latest_breach(
    engine: Engine, sla: dict, *, end: float, source: MetricSource | None = None
) -> PastBreach | None:
    """Return the SLA's latest breach up to ``end``: an imported declared one or a found one."""
    with engine.connect() as conn:
        windows = list_recordings(conn=conn, sla=sla["name"])
    found: list[PastBreach] = [
        PastBreach(w.breach_start, "declared")
        for w in windows
        if w.breach_start is not None and w.breach_start <= end
    ]
    if sla.get("breach_start") is not None and sla["breach_start"] <= end:
        found.append(PastBreach(float(sla["breach_start"]), "declared"))  # set on the SLA itself
    at = found_in_series(engine, sla, start=end - SCAN_S, end=end, source=source)
    if at is not None:
        found.append(PastBreach(at, "threshold"))
    return max(found, key=lambda b: b.start) if found else None
