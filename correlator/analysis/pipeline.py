"""The analysis end to end, in named stages: align, measure, detect, rank, explain."""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from correlator.analysis import baseline, callgap, kinds, onset, ramps, ranking, signals, units
from correlator.analysis import breach as breach_mod
from correlator.analysis.config import Config
from correlator.analysis.result import AnalysisResult
from correlator.analysis.scoring import explain, rank
from correlator.analysis.stages import Detection, Measured, Timeline, Window
from correlator.analysis.timeline import Grid, choose_grid, choose_step
from correlator.analysis.topology import Topology, with_calls
from correlator.bundle import Bundle


class AnalysisError(ValueError):
    """The data cannot be analysed (no series, nothing in the window)."""


def analyze(bundle: Bundle, *, at: float | None = None, config: Config | None = None) -> dict:
    """Rank the series and changes of a bundle as causes of its SLA breach (FORMAT.md output)."""
    return run_analysis(bundle, at=at, config=config).to_dict()


def run_analysis(
    bundle: Bundle, *, at: float | None = None, config: Config | None = None
) -> AnalysisResult:
    """Run the stages on a bundle and return the result (``to_dict()`` is the output)."""
    cfg = config or Config()
    tl = align(bundle, at)
    result = AnalysisResult(bundle, tl.grid, tl.breach, cfg, tl.graph, tl.sla_rows)
    if tl.breach.start is None:
        return result
    win = window(tl, cfg)
    base = baseline.reference(bundle.baseline, cfg)
    t_align = time.perf_counter()
    m = measure(tl, win, base, cfg)
    t_rank = time.perf_counter()
    d = detect(tl, win, m, cfg)
    scored = explain(tl, win, m, d, rank(tl, m, d, cfg), cfg)
    timings = {
        "timeline_s": round(t_rank - t_align, 4),
        "ranking_s": round(time.perf_counter() - t_rank, 4),
    }
    return replace(result, scored=scored, timings=timings)


def align(bundle: Bundle, at: float | None) -> Timeline:
    """Put the series with samples on one grid and find the breach (at or before ``at``)."""
    series = [s for s in bundle.series if s.ts.size]
    if not series:
        raise AnalysisError("the bundle holds no samples")
    grid = choose_grid(series, choose_step(series))
    found, agg, sla_rows = _pick_breach(bundle, grid, at)
    series = series + callgap.gaps(series)
    topology = with_calls(bundle.topology or {}, (s.labels for s in series))
    graph = Topology.from_dict(topology)
    return Timeline(bundle, series, grid, found, agg, sla_rows, graph)


def _pick_breach(bundle: Bundle, grid: Grid, at: float | None):
    sla = dict(bundle.sla)
    if at is not None and "breach_start" not in sla and "threshold" in sla:
        found, agg, rows = breach_mod.evaluate(bundle.series, sla, grid)
        # ``at`` is read to the nearest bin: the breach start the output gives (whole
        # seconds, off the grid's phase) finds that breach again.
        upto = grid.times <= at + grid.step / 2
        clipped = np.where(upto, agg, np.nan)
        before = breach_mod.find_breach(
            grid.times,
            clipped,
            op=sla["op"],
            threshold=float(sla["threshold"]),
            for_seconds=float(sla.get("for_seconds", 0) or 0),
        )
        if before.start is not None:
            return found if found.start == before.start else before, agg, rows
        sla["breach_start"] = at
    elif at is not None:
        sla["breach_start"] = at
    return breach_mod.evaluate(bundle.series, sla, grid)


def window(tl: Timeline, cfg: Config) -> Window:
    """Return the breach column and the end of the reference before it."""
    start, step = tl.breach.start, tl.grid.step
    assert start is not None  # only asked once a breach was found
    b = int(np.clip(tl.grid.index(start), 0, tl.grid.size - 1))
    ref_end = b - math.ceil(cfg.reference_gap_s / step)
    if ref_end < cfg.min_reference_points:
        ref_end = max(b - max(1, math.ceil(cfg.active_pre_s / step)), 1)
    return Window(start, b, ref_end)


def measure(
    tl: Timeline, win: Window, base: tuple[dict | None, dict | None], cfg: Config
) -> Measured:
    """Build the signals and their reference: the window's, or the baseline's ``base``."""
    base_stats, base_refs = base
    ref_cols = slice(0, win.ref_end)
    sig = signals.build(
        tl.series,
        tl.grid,
        kinds=cfg.kinds,
        ref_cols=ref_cols,
        references=base_refs,
        window=signals.window_columns(cfg.drift_window_s, tl.grid.step),
        volatile=cfg.volatile_labels,
    )
    ref = onset.reference(sig.matrix[:, ref_cols], rel_floor=cfg.rel_floor, abs_floor=cfg.abs_floor)
    on_baseline = np.zeros(len(sig.names), dtype=bool)
    if base_stats:
        keys = [sig.key(i) for i in range(len(sig.names))]
        on_baseline = baseline.apply(ref, keys, base_stats, cfg)
    kind = kinds.by_name(cfg.kinds)
    rows = [kind[k] for k in sig.kinds]
    # A level-relative floor collapses at level zero: there the unit says what a meaningful
    # move is (a kind with an alarm level has its own floor below).
    plain = [n if k.level_floors else None for n, k in zip(sig.names, rows, strict=True)]
    floors = units.zero_floors(plain)
    # A kind with an alarm level is out of range from there, whatever its own noise.
    kind_floor = np.array([k.alarm / cfg.off_z if k.alarm else 0.0 for k in rows])
    full_z = np.array(
        [k.full / f if f and k.full else cfg.full_z for k, f in zip(rows, kind_floor, strict=True)]
    )
    m = Measured(
        sig,
        ref,
        bool(base_stats),
        on_baseline,
        np.array([k.directional for k in rows], dtype=bool),
        np.array([k.ramps for k in rows], dtype=bool),
        np.array(
            [k.interval or units.over_interval(n) for k, n in zip(rows, sig.names, strict=True)],
            dtype=bool,
        ),
        floors,
        kind_floor,
        full_z,
    )
    _floor(m, cfg)
    return m


def _floor(m: Measured, cfg: Config) -> None:
    """Apply, in place, the level-zero floors and each kind's alarm floor to the reference."""
    ref = m.ref
    onset.floor_at_zero(ref, m.floors, zero=cfg.abs_floor)
    ref.scale = np.maximum(ref.scale, m.kind_floor)
    if ref.lower is not None:
        ref.lower = np.maximum(ref.lower, m.kind_floor)


def detect(tl: Timeline, win: Window, m: Measured, cfg: Config) -> Detection:
    """Find each row's excursion by the breach and its onset (looking past a slow ramp)."""
    step, b, matrix = tl.grid.step, win.breach, m.signals.matrix
    zs = onset.robust_z(matrix, m.ref)
    pre = math.ceil(cfg.active_pre_s / step)
    post = max(1, math.ceil(cfg.post_s / step))
    active = (b - pre, b + post)
    # A separate baseline leaves the whole incident window free for the onset search.
    lo = max(b - math.ceil(cfg.search_s / step), 0 if m.has_baseline else win.ref_end)
    anomalies = onset.detect(zs, lo=lo, active=active, off=cfg.off_z)
    # A slow ramp that began inside the reference hides there: measure it from before it.
    ramping = ~m.on_baseline & m.ramps & (anomalies.strength >= cfg.off_z)
    moved, starts = _ramp_starts(m.signals, anomalies, ramping, b=b, ref_end=win.ref_end, cfg=cfg)
    lo_rows = np.full(len(m.signals.names), lo)
    if moved.size:
        ramps.reference_before(m.ref, matrix, moved, starts, cfg)
        _floor(m, cfg)
        # The point before the ramp may be the last normal one, so its start is a seen onset.
        lo_rows[moved] = np.minimum(lo_rows[moved], np.maximum(starts - 1, 0))
        zs = onset.robust_z(matrix, m.ref)
        anomalies = onset.detect(zs, lo=lo_rows, active=active, off=cfg.off_z)
    # A sample over the interval since the one before (a rate, a count per minute) crossed
    # out of range once enough of that interval was affected: its onset is the interval's
    # start, half a step before its bin, in whose middle the sample sits (``choose_grid``).
    onset_t = tl.grid.times[anomalies.onset] - np.where(m.interval, step / 2, 0.0)
    return Detection(anomalies, onset_t, win.start - onset_t)


def _ramp_starts(sig: signals.Signals, anomalies, rows_ok, *, b: int, ref_end: int, cfg: Config):
    """Return rows whose reference holds the start of a ramp lasting to the breach, and starts.

    Only the ``ramp_rows`` strongest rows are tried; equal strengths (saturated rows) are
    taken by identity, so which rows are tried does not depend on the order they came in.
    """
    rows = np.flatnonzero(rows_ok)
    if rows.size > cfg.ramp_rows:
        keys = [sig.identity(i) for i in rows.tolist()]
        place = ranking.tie_order(keys, anomalies.strength[rows])
        rows = np.sort(rows[np.argsort(place)[: cfg.ramp_rows]])
    least = cfg.min_reference_points
    if rows.size == 0 or ref_end <= least:
        return rows[:0], rows[:0]
    starts, sign = ramps.hinge_starts(
        sig.matrix[rows], lo=least, hi=ref_end, end=b + 1, gain=cfg.ramp_gain
    )
    keep = (starts >= least) & (sign == anomalies.direction[rows])
    return rows[keep], starts[keep]


__all__ = ["AnalysisError", "analyze", "run_analysis"]
