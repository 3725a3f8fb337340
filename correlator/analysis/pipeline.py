"""The analysis end to end: breach, signals, reference, anomalies, ranking, evidence."""

from __future__ import annotations

import math
import time

import numpy as np

from correlator.analysis import (
    baseline,
    drift,
    evidence,
    histogram,
    onset,
    ramps,
    ranking,
    signals,
    units,
)
from correlator.analysis import breach as breach_mod
from correlator.analysis import nodes as node_rules
from correlator.analysis.changes import score_changes
from correlator.analysis.config import Config
from correlator.analysis.result import Context, build_result
from correlator.analysis.timeline import Grid, choose_grid, choose_step
from correlator.analysis.topology import Topology, label_nodes, sla_nodes
from correlator.bundle import Bundle


class AnalysisError(ValueError):
    """The data cannot be analysed (no series, nothing in the window)."""


def _pick_breach(bundle: Bundle, grid: Grid, at: float | None):
    sla = dict(bundle.sla)
    if at is not None and "breach_start" not in sla and "threshold" in sla:
        found, agg, rows = breach_mod.evaluate(bundle.series, sla, grid)
        upto = grid.times <= at
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


def analyze(bundle: Bundle, *, at: float | None = None, config: Config | None = None) -> dict:
    """Rank the series and changes of a bundle as causes of its SLA breach (FORMAT.md output)."""
    cfg = config or Config()
    series = [s for s in bundle.series if s.ts.size]
    if not series:
        raise AnalysisError("the bundle holds no samples")
    grid = choose_grid(series, choose_step(series))
    found, agg, sla_rows = _pick_breach(bundle, grid, at)
    graph = Topology.from_dict(bundle.topology or {})
    ctx = Context(bundle=bundle, grid=grid, breach=found, config=cfg, graph=graph)
    if found.start is None:
        return build_result(ctx)
    step = grid.step
    b = int(np.clip(grid.index(found.start), 0, grid.size - 1))
    ref_end = b - math.ceil(cfg.reference_gap_s / step)
    if ref_end < cfg.min_reference_points:
        ref_end = max(b - max(1, math.ceil(cfg.active_pre_s / step)), 1)
    ref_cols = slice(0, ref_end)
    base_stats, base_dists = baseline.reference(bundle.baseline, cfg)
    width = max(1, round(cfg.drift_window_s / step))
    t_align = time.perf_counter()
    sig = signals.build(
        series,
        grid,
        ref_cols=ref_cols,
        ref_dists=base_dists,
        window=width,
        volatile=cfg.volatile_labels,
    )
    ref = onset.reference(sig.matrix[:, ref_cols], rel_floor=cfg.rel_floor, abs_floor=cfg.abs_floor)
    on_baseline = np.zeros(len(sig.names), dtype=bool)
    if base_stats:
        keys = [sig.key(i) for i in range(len(sig.names))]
        on_baseline = baseline.apply(ref, keys, base_stats, cfg)
    is_drift = np.array([k == "drift" for k in sig.kinds], dtype=bool)
    # A level-relative floor collapses at level zero: there the unit and the siblings say
    # what a meaningful move is (drift has its own floor below).
    plain = [n if k != "drift" else None for n, k in zip(sig.names, sig.kinds, strict=True)]
    floors = units.zero_floors(plain, ref.scale, cfg.sibling_floor)
    # Drift is out of range from PSI_WARN on, whatever its own noise; full at PSI 1.
    drift_floor = drift.PSI_WARN / cfg.off_z
    _floor(ref, floors, is_drift, drift_floor, cfg)
    full_z = np.where(is_drift, 1.0 / drift_floor, cfg.full_z)
    t_rank = time.perf_counter()
    smooth_width = int(np.clip(round(45.0 / step), 1, cfg.smooth_width))
    zs = onset.smooth(onset.robust_z(sig.matrix, ref), smooth_width)
    pre = math.ceil(cfg.active_pre_s / step)
    post = max(1, math.ceil(cfg.post_s / step))
    active = (b - pre, b + post)
    # A separate baseline leaves the whole incident window free for the onset search.
    lo = max(b - math.ceil(cfg.search_s / step), 0 if base_stats else ref_end)
    anomalies = onset.detect(zs, lo=lo, active=active, off=cfg.off_z)
    # A slow ramp that began inside the reference hides there: measure it from before it.
    ramping = ~on_baseline & ~is_drift & (anomalies.strength >= cfg.off_z)
    moved, starts = _ramp_starts(sig.matrix, anomalies, ramping, b=b, ref_end=ref_end, cfg=cfg)
    lo_rows = np.full(len(sig.names), lo)
    if moved.size:
        ramps.reference_before(ref, sig.matrix, moved, starts, cfg)
        _floor(ref, floors, is_drift, drift_floor, cfg)
        # The point before the ramp may be the last normal one, so its start is a seen onset.
        lo_rows[moved] = np.minimum(lo_rows[moved], np.maximum(starts - 1, 0))
        zs = onset.smooth(onset.robust_z(sig.matrix, ref), smooth_width)
        anomalies = onset.detect(zs, lo=lo_rows, active=active, off=cfg.off_z)
    onset_t = grid.times[anomalies.onset]
    lead = found.start - onset_t

    nodes = [label_nodes(lbl) for lbl in sig.labels]
    dist = graph.distances(sla_nodes(bundle.sla, nodes, graph))
    place = ranking.place(nodes, dist, graph)
    sev = ranking.severity(anomalies.strength, off_z=cfg.off_z, full_z=full_z)
    time_w = ranking.timing(lead, step=step, cfg=cfg)
    topo_w = ranking.topology_weight(place, cfg)
    extra = np.ones(len(sig.names))
    sla_labels = bundle.sla.get("labels") or {}
    sla_family = ranking.family(bundle.sla["metric"])
    start_nodes = set(sla_nodes(bundle.sla, nodes, graph))
    for i, name in enumerate(sig.names):
        if name == bundle.sla["metric"] and all(
            sig.labels[i].get(k) == v for k, v in sla_labels.items()
        ):
            extra[i] = 0.0  # the breached series itself
        elif ranking.family(name) == sla_family and start_nodes.intersection(place.nodes[i]):
            extra[i] = cfg.sla_family
        if ref.count[i] < 3:
            extra[i] *= 0.5  # no real reference
    # An excursion already under way where the search starts has no visible onset: it may
    # well be a standing difference from the reference rather than this incident. Against
    # a separately recorded baseline, though, a difference already there is the anomaly.
    censored = anomalies.onset <= lo_rows
    extra *= np.where(censored, np.where(on_baseline, cfg.standing, cfg.censored), 1.0)
    up = node_rules.callers(bundle.topology or {})
    traffic = node_rules.traffic_weight(sig.names, place.primary, up, weight=cfg.callee_traffic)
    extra *= traffic
    base = ranking.combine(anomalies, sev=sev, time_w=time_w, topo_w=topo_w, extra_w=extra)
    cand = np.argsort(-base)[:300]
    cand = cand[base[cand] > 0]
    # Only a measured anomaly (a real reference, onset by the breach) explains another.
    measured = sev * (time_w > 0.5) * (ref.count >= 3) * (traffic == 1.0) * ~censored
    weight, who = ranking.explained_by(
        cand,
        sev=measured,
        onset_t=onset_t,
        p=place,
        graph=graph,
        step=step,
        ratio=cfg.explains_ratio,
    )
    score = base * (1 - cfg.explained * weight)
    reach_cache: dict = {}
    upstream: list[set[str]] = []
    for i in range(len(sig.names)):
        pnode = place.primary[i]
        if base[i] <= 0 or pnode is None:
            upstream.append(set())
            continue
        if pnode not in reach_cache:
            reach_cache[pnode] = graph.reaches(pnode) | {pnode}
        upstream.append(reach_cache[pnode])
    changes = score_changes(
        bundle.changes,
        breach=found.start,
        step=step,
        dist=dist,
        known=set(graph.nodes),
        labels=sig.labels,
        row_nodes=place.nodes,
        sev=measured,
        onset_t=onset_t,
        upstream=upstream,
        cfg=cfg,
    )
    for c in changes:
        for i in c.rows:
            score[i] *= 1 - cfg.explained * c.score
    keep = (traffic == 1.0) & ~censored
    node_sev = node_rules.node_severity(measured, place.primary, keep)
    shared = node_rules.shared_by_callers(
        node_sev, up, graph, least=cfg.caller_least, ratio=cfg.explains_ratio
    )
    score *= node_rules.support_weight(place.primary, shared, step=cfg.support, most=3)
    score = ranking.spread_nodes(score, place.primary, repeat=cfg.same_node)
    ctx.signals, ctx.anomalies, ctx.score, ctx.who = sig, anomalies, score, who
    ctx.changes, ctx.ref, ctx.place, ctx.agg, ctx.sla_rows = changes, ref, place, agg, sla_rows
    ctx.lead, ctx.onset_t = lead, onset_t
    out = build_result(ctx)
    out["timings"] = {
        "timeline_s": round(t_rank - t_align, 4),
        "ranking_s": round(time.perf_counter() - t_rank, 4),
    }
    return out


def _floor(ref, floors, is_drift, drift_floor: float, cfg: Config) -> None:
    """Apply, in place, the level-zero floors and the drift floor to the reference."""
    onset.floor_at_zero(ref, floors, zero=cfg.abs_floor)
    ref.scale = np.where(is_drift, np.maximum(ref.scale, drift_floor), ref.scale)
    if ref.lower is not None:
        ref.lower = np.where(is_drift, np.maximum(ref.lower, drift_floor), ref.lower)


def _ramp_starts(matrix, anomalies, rows_ok, *, b: int, ref_end: int, cfg: Config):
    """Return rows whose reference holds the start of a ramp lasting to the breach, and starts."""
    rows = np.flatnonzero(rows_ok)
    rows = rows[np.argsort(-anomalies.strength[rows], kind="stable")][: cfg.ramp_rows]
    least = cfg.min_reference_points
    if rows.size == 0 or ref_end <= least:
        return rows[:0], rows[:0]
    starts, sign = ramps.hinge_starts(
        matrix[rows], lo=least, hi=ref_end, end=b + 1, gain=cfg.ramp_gain
    )
    keep = (starts >= least) & (sign == anomalies.direction[rows])
    return rows[keep], starts[keep]


def drift_figures(h: histogram.Histogram, ref_counts, at: int, width: int) -> dict:
    """Return PSI, KS, Jensen-Shannon and Wasserstein of the window ending at ``at``."""
    counts = histogram.window_sum(h.counts, width)[at]
    pts = drift.bin_points(h.bounds)
    return {
        "psi": float(drift.psi(counts, ref_counts)),
        "ks": float(drift.ks(counts, ref_counts)),
        "js": float(drift.jensen_shannon(counts, ref_counts)),
        "wasserstein": float(drift.wasserstein(counts, ref_counts, pts)),
    }


__all__ = ["AnalysisError", "analyze", "drift_figures", "evidence"]
