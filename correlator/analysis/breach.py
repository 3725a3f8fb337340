"""SLA evaluation: which series it covers, its aggregate, and when the breach starts and ends."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from correlator.analysis.timeline import Grid, align
from correlator.bundle import Series


class SlaMatchError(ValueError):
    """The SLA names a metric and labels that no series in the data carries."""

    def __init__(self, sla: dict):
        labels = sla.get("labels") or {}
        shown = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        super().__init__(
            f"SLA {sla.get('name')!r}: no series matches metric {sla.get('metric')!r} "
            f"with labels {{{shown}}}"
        )
        self.sla = sla


@dataclass(frozen=True, slots=True)
class Breach:
    """A found (or given) breach: start and end as unix seconds, end None while ongoing."""

    start: float | None
    end: float | None
    given: bool = False


def matches(s: Series, metric: str, labels: dict) -> bool:
    """Say whether a series carries the metric and every one of the labels."""
    return s.name == metric and all(s.labels.get(k) == v for k, v in labels.items())


def matching(series: list[Series], sla: dict) -> list[int]:
    """Return the indices of the series an SLA covers; raise ``SlaMatchError`` if none."""
    labels = sla.get("labels") or {}
    found = [i for i, s in enumerate(series) if matches(s, sla["metric"], labels)]
    if not found:
        raise SlaMatchError(sla)
    return found


def aggregate(matrix: np.ndarray, how: str) -> np.ndarray:
    """Aggregate a (series x time) matrix per time point, ignoring missing values."""
    finite = np.isfinite(matrix)
    any_ = finite.any(axis=0)
    safe = np.where(finite, matrix, np.nan)
    out = np.full(matrix.shape[1], np.nan)
    if not any_.any():
        return out
    with np.errstate(all="ignore"):
        cols = safe[:, any_]
        if how == "max":
            out[any_] = np.nanmax(cols, axis=0)
        elif how == "min":
            out[any_] = np.nanmin(cols, axis=0)
        elif how == "mean":
            out[any_] = np.nanmean(cols, axis=0)
        elif how == "sum":
            out[any_] = np.nansum(cols, axis=0)
        else:
            raise ValueError(f"unknown aggregate {how!r}")
    return out


def wrong_side(values: np.ndarray, op: str, threshold: float) -> np.ndarray:
    """Return where values violate ``op threshold`` (NaN is never a violation)."""
    with np.errstate(invalid="ignore"):
        return values > threshold if op == ">" else values < threshold


def _held(
    times: np.ndarray, values: np.ndarray, op: str, threshold: float, for_seconds: float
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Return the valued times, where each is wrong, and where each run first held long enough.

    Points without a value are skipped: they neither break nor extend a run.
    """
    present = np.isfinite(values)
    t, bad = times[present], wrong_side(values[present], op, threshold)
    held: list[int] = []
    run_start = None
    for i in range(t.size):
        if not bad[i]:
            run_start = None
            continue
        if run_start is None:
            run_start = t[i]
        if t[i] - run_start >= for_seconds and (not held or t[held[-1]] < run_start):
            held.append(i)
    return t, bad, held


def find_breach(
    times: np.ndarray, values: np.ndarray, *, op: str, threshold: float, for_seconds: float
) -> Breach:
    """Find the first time the values stayed on the wrong side for ``for_seconds``, and the end."""
    t, bad, held = _held(times, values, op, threshold, for_seconds)
    if not held:
        return Breach(None, None)
    i = held[0]
    later = np.flatnonzero(~bad[i:])
    return Breach(float(t[i]), float(t[i + later[0]]) if later.size else None)


def last_breach(
    times: np.ndarray, values: np.ndarray, *, op: str, threshold: float, for_seconds: float
) -> float | None:
    """Return when the last run on the wrong side had lasted ``for_seconds``; None if none did."""
    t, _bad, held = _held(times, values, op, threshold, for_seconds)
    return float(t[held[-1]]) if held else None


def evaluate(series: list[Series], sla: dict, grid: Grid) -> tuple[Breach, np.ndarray, list[int]]:
    """Return the breach, the aggregate on the grid and the covered series' indices."""
    rows = matching(series, sla)
    agg = aggregate(align([series[i] for i in rows], grid), sla.get("aggregate", "max"))
    if "breach_start" in sla and sla["breach_start"] is not None:
        start = float(sla["breach_start"])
        end = None
        if "threshold" in sla and "op" in sla:
            after = (grid.times >= start) & np.isfinite(agg)
            ok = after & ~wrong_side(agg, sla["op"], float(sla["threshold"]))
            end = float(grid.times[np.flatnonzero(ok)[0]]) if ok.any() else None
        return Breach(start, end, given=True), agg, rows
    found = find_breach(
        grid.times,
        agg,
        op=sla["op"],
        threshold=float(sla["threshold"]),
        for_seconds=float(sla.get("for_seconds", 0) or 0),
    )
    return found, agg, rows
