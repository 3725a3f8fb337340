"""One timeline: series of different rates, gaps and clock skew aligned onto one grid."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from correlator.bundle import Series

# Labels that change when a deploy happens while the series stays the same thing.
VOLATILE_LABELS = ("version",)
HISTOGRAM_SUFFIXES = ("_count", "_bucket", "_sum")


@dataclass(frozen=True, slots=True)
class Grid:
    """Bins ``[origin + k * step, origin + (k + 1) * step)`` labelled by their start."""

    origin: float
    step: float
    size: int

    @property
    def times(self) -> np.ndarray:
        """Return the grid times as unix seconds."""
        return self.origin + self.step * np.arange(self.size, dtype=np.float64)

    def index(self, ts: float | np.ndarray) -> np.ndarray:
        """Return the index of the bin holding each time (may fall outside the grid)."""
        return np.floor((np.asarray(ts, dtype=np.float64) - self.origin) / self.step).astype(
            np.int64
        )


def identity(name: str, labels: dict[str, str], volatile=VOLATILE_LABELS) -> tuple:
    """Return the identity of a series: its name and labels without the volatile ones."""
    return (name, tuple(sorted((k, v) for k, v in labels.items() if k not in volatile)))


def merge_label_changes(series: list[Series], volatile=VOLATILE_LABELS) -> list[Series]:
    """Join series that continue under a new label set (a deploy changing ``version``)."""
    groups: dict[tuple, list[Series]] = {}
    for s in series:
        groups.setdefault(identity(s.name, s.labels, volatile), []).append(s)
    out = []
    for (name, labels), parts in groups.items():
        if len(parts) == 1:
            s = parts[0]
            out.append(Series(name, dict(labels), s.ts, s.values))
            continue
        ts = np.concatenate([p.ts for p in parts])
        vs = np.concatenate([p.values for p in parts])
        order = np.argsort(ts, kind="stable")
        ts, vs = ts[order], vs[order]
        keep = np.concatenate(([True], np.diff(ts) > 0)) if ts.size else np.ones(0, bool)
        out.append(Series(name, dict(labels), ts[keep], vs[keep]))
    return out


def is_counter(name: str, values: np.ndarray | None = None) -> bool:
    """Say whether a series is a Prometheus counter.

    ``_total`` names a counter; ``_count``, ``_sum`` and ``_bucket`` do only when the values
    never fall but at resets (a gauge such as a per-window request sum is not one).
    """
    if name.endswith("_total"):
        return True
    if not name.endswith(HISTOGRAM_SUFFIXES) or values is None:
        return False
    v = values[np.isfinite(values)]
    # A few rising points of a gauge (a per-window sum) look like a counter by chance.
    if v.size < (3 if name.endswith("_bucket") else 8):
        return False
    d = np.diff(v)
    # A counter grows: a mostly flat gauge (idle, zero) with rare blips is not one.
    return float(np.mean(d >= 0)) >= 0.9 and float(np.mean(d > 0)) >= 0.5


def counter_rate(ts: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return per-second rates between samples of a counter, treating a drop as a reset."""
    ok = np.isfinite(values)
    ts, values = ts[ok], values[ok]
    if ts.size < 2:
        return ts[:0], values[:0]
    dv = np.diff(values)
    reset = dv < 0
    dv[reset] = values[1:][reset]  # after a reset the counter restarted from zero
    return ts[1:], dv / np.diff(ts)


def native_step(ts: np.ndarray) -> float:
    """Return a series' typical sample interval (median spacing), or NaN with < 2 samples."""
    if ts.size < 2:
        return float("nan")
    d = np.diff(ts)
    k = d.size // 2
    return float(np.partition(d, k)[k])


def choose_step(series: list[Series], *, max_points: int = 4000) -> float:
    """Pick the grid step: the finer typical sample interval, whole seconds."""
    steps = np.array([native_step(s.ts) for s in series], dtype=np.float64)
    steps = steps[np.isfinite(steps) & (steps > 0)]
    step = float(np.percentile(steps, 25)) if steps.size else 60.0
    step = max(1.0, round(step))
    lo = min((s.ts[0] for s in series if s.ts.size), default=0.0)
    hi = max((s.ts[-1] for s in series if s.ts.size), default=0.0)
    while (hi - lo) / step > max_points:
        step *= 2
    return step


def choose_grid(series: list[Series], step: float) -> Grid:
    """Return a grid covering every sample, phased so that samples fall mid-bin.

    The phase is the circular mean of the series' first-sample offsets, so a few seconds
    of clock skew between hosts still put simultaneous samples into one bin.
    """
    ts = [s.ts for s in series if s.ts.size]
    if not ts:
        return Grid(0.0, step, 0)
    firsts = np.array([t[0] for t in ts])
    angle = 2 * np.pi * np.mod(firsts, step) / step  # circular mean: robust to wrap-around
    phase = np.mod(np.arctan2(np.sin(angle).mean(), np.cos(angle).mean()), 2 * np.pi)
    offset = phase / (2 * np.pi) * step - step / 2
    lo = min(t[0] for t in ts)
    hi = max(t[-1] for t in ts)
    origin = offset + np.floor((lo - offset) / step) * step
    size = int(np.floor((hi - origin) / step)) + 1
    return Grid(float(origin), float(step), max(size, 1))


def to_values(s: Series) -> tuple[np.ndarray, np.ndarray]:
    """Return a series' samples as (times, values), counters turned into rates."""
    if is_counter(s.name, s.values):
        return counter_rate(s.ts, s.values)
    return s.ts, np.where(np.isfinite(s.values), s.values, np.nan)


def align(series: list[Series], grid: Grid, *, rates: bool = True) -> np.ndarray:
    """Return a (series x grid) matrix: last sample per grid point, short gaps carried."""
    out = np.full((len(series), grid.size), np.nan)
    limits = np.ones(len(series), dtype=np.int64)
    for i, s in enumerate(series):
        ts, vs = to_values(s) if rates else (s.ts, s.values)
        if ts.size == 0:
            continue
        idx = grid.index(ts)
        inside = (idx >= 0) & (idx < grid.size)
        out[i, idx[inside]] = vs[inside]
        ns = native_step(ts)
        if np.isfinite(ns):
            limits[i] = max(1, int(np.ceil(ns / grid.step - 0.25)))
    for limit in np.unique(limits):
        rows = np.flatnonzero(limits == limit)
        filled = pd.DataFrame(out[rows].T).ffill(limit=int(limit)).to_numpy().T
        out[rows] = filled
    return out
