"""Stages 4 and 5 of the analysis: rank each row, then lower what something else explains."""

from __future__ import annotations

import numpy as np

from correlator.analysis import callgap, grouping, ranking, units
from correlator.analysis import nodes as node_rules
from correlator.analysis.changes import score_changes
from correlator.analysis.config import Config
from correlator.analysis.result import Scored
from correlator.analysis.signals import Signals
from correlator.analysis.stages import Detection, Measured, Ranking, Timeline, Window
from correlator.analysis.topology import Topology, label_nodes, sla_nodes

# The factors of a row's score, in the order they are multiplied (``ranking.combine``).
FACTORS = (
    "severity",
    "timing",
    "persistence",
    "topology",
    "symptom",
    "unseen",
    "harmless",
    "client_side",
    "latency_share",
    "callee_traffic",
    "explained",
    "changed",
    "support",
)


def exponents(cfg: Config) -> dict[str, float]:
    """Return ``cfg.exponents`` as a mapping, refusing a name that is no factor of the score."""
    given = dict(cfg.exponents)
    unknown = sorted(set(given) - set(FACTORS))
    if unknown:
        raise ValueError(
            f"Config.exponents: {', '.join(unknown)} is no factor of the score; "
            f"the factors are {', '.join(FACTORS)}"
        )
    return given


def rank(tl: Timeline, m: Measured, d: Detection, cfg: Config) -> Ranking:
    """Score each row by size, timing, persistence, place in the topology and symptoms."""
    sig, graph = m.signals, tl.graph
    gaps = callgap.is_gap(sig.names)
    viewing = node_rules.client_side(sig.names, sig.labels)
    nodes = [
        callgap.nodes(lbl, label_nodes(lbl)) if g else label_nodes(lbl)
        for g, lbl in zip(gaps, sig.labels, strict=True)
    ]
    start = sla_nodes(tl.bundle.sla, nodes, graph)
    dist = graph.upstream(start)
    place = ranking.place(nodes, dist, graph)
    sev = ranking.severity(d.anomalies.strength, off_z=cfg.off_z, full_z=m.full_z)
    # An excursion already under way where the search starts has no visible onset: it may
    # well be a standing difference from the reference rather than this incident. Against
    # a separately recorded baseline it counts by the share of it that arose in the window.
    censored = d.anomalies.censored
    assert tl.breach.start is not None  # only ranked once a breach was found
    b = int(np.clip(tl.grid.index(tl.breach.start), 0, tl.grid.size - 1))
    standing = cfg.standing + (1 - cfg.standing) * _moved_share(m, d, b, cfg)
    share = _latency_share(tl, m, d, b)
    traffic = node_rules.traffic_weight(
        sig.names, place.primary, graph.callers, weight=cfg.callee_traffic
    )
    # Call gaps that rose alike towards several callees are their caller's.
    moved = (d.anomalies.strength >= cfg.off_z) & (d.lead >= 0)
    one_sided = callgap.caller_side(
        gaps, sig.names, sig.labels, np.where(moved, _rises(m, d), 0.0), ratio=cfg.explains_ratio
    )
    factors = {
        "severity": sev,
        "timing": ranking.timing(d.lead, cfg=cfg),
        "persistence": ranking.held(d.anomalies, persistence=cfg.persistence),
        "topology": ranking.topology_weight(place, cfg, linked=bool(graph.depends)),
        "symptom": _symptom_weights(tl.bundle.sla, sig),
        "unseen": np.where(censored, np.where(m.on_baseline, standing, cfg.censored), 1.0),
        "harmless": np.where(_harmless(tl.bundle.sla, m, d, cfg), cfg.harmless, 1.0),
        # A caller's view of its calls is set by what it calls (call gaps that rose alike
        # towards several callees are the caller's own doing: 0); a latency rise far below
        # the SLA's cannot carry the breach.
        "client_side": np.where(viewing, cfg.client_side, 1.0) * ~one_sided,
        "latency_share": np.clip(share / cfg.latency_share, cfg.latency_least, 1.0),
        "callee_traffic": traffic,
    }
    base = ranking.combine(factors, exponents(cfg))
    # Only a measured anomaly (a seen onset) explains another: one that began after the
    # breach still explains what began later still (``ranking.explained_by`` orders them).
    explainer_sev = sev * (traffic == 1.0) * ~censored
    explainer_sev *= ~one_sided
    # A move the way that does not hurt causes nothing, so it explains nothing either (read
    # from its factor, so switching the rule off, ``harmless`` 1, lets it explain again).
    explainer_sev *= factors["harmless"] == 1.0
    # Less demand slows or fails nothing: a fall in traffic explains no other anomaly.
    explainer_sev *= ~(node_rules.demand(sig.names) & (d.anomalies.direction < 0))
    subjects = [n[0] if n else None for n in nodes]
    return Ranking(
        place,
        dist,
        graph.callers,
        subjects,
        factors,
        base,
        explainer_sev,
        (gaps, viewing),
    )


def _latency_share(tl: Timeline, m: Measured, d: Detection, b: int) -> np.ndarray:
    """Return the share of the SLA latency's rise that each latency row's own rise matches.

    The SLA's rise is its peak from the breach (column ``b``) on over its median before.
    """
    sla = tl.bundle.sla["metric"]
    agg = np.asarray(tl.agg, dtype=float)
    if not (np.isfinite(agg[:b]).any() and np.isfinite(agg[b:]).any()):
        return np.ones(len(m.signals.names))
    rises = np.where(m.directional, _rises(m, d), np.nan)
    sla_rise = float(np.nanmax(agg[b:])) - float(np.nanmedian(agg[:b]))
    return units.latency_share(m.signals.names, rises, sla, sla_rise)


def _rises(m: Measured, d: Detection) -> np.ndarray:
    """Return each row's rise at its peak over its reference median (0 where it fell)."""
    a = d.anomalies
    peak = m.signals.matrix[np.arange(a.peak.size), a.peak]
    return np.where(a.direction > 0, peak - m.ref.median, 0.0)


def _moved_share(m: Measured, d: Detection, b: int, cfg: Config) -> np.ndarray:
    """Return the share of each row's difference from its reference that arose in the window.

    A difference already there at the window's first point and steady up to the breach
    (column ``b``) did not start this incident: share 0. Moves within ``off_z`` spreads of
    the first point are noise, not a move.
    """
    a, x = d.anomalies, m.signals.matrix[:, : b + 1]
    rows = np.arange(x.shape[0])
    finite = np.isfinite(x)
    first = x[rows, np.argmax(finite, axis=1)]
    with np.errstate(invalid="ignore", divide="ignore"):
        moved = np.nanmax(a.direction[:, None] * (x - first[:, None]), axis=1, initial=0.0)
        total = a.direction * (m.signals.matrix[rows, a.peak] - m.ref.median)
        share = np.clip(moved / total, 0.0, 1.0)
    seen = moved > cfg.off_z * m.ref.scale
    return np.where(seen & np.isfinite(share), share, 0.0)


def _harmless(sla: dict, m: Measured, d: Detection, cfg: Config) -> np.ndarray:
    """Say which rows moved the way that does not hurt (availability up, latency down).

    The way each metric hurts comes from ``cfg.harm`` (metric name -> +1 up, -1 down), then
    the SLA's own metric family (its ``op``), then the metric's name (``units``).
    """
    given = dict(cfg.harm)
    family = ranking.family(sla["metric"])
    sla_way = {">": 1, "<": -1}.get(sla.get("op", ""), 0)

    def way(name: str, labels: dict[str, str]) -> int:
        if name in given:
            return given[name]
        if sla_way and ranking.family(name) == family:
            return sla_way
        return units.harm_direction(name) or units.harm_of_labels(labels)

    sig = m.signals
    harm = np.array([way(n, lbl) for n, lbl in zip(sig.names, sig.labels, strict=True)], float)
    harm = np.where(m.directional, harm, 0.0)
    return (harm != 0) & (d.anomalies.direction != harm)


def _symptom_weights(sla: dict, sig: Signals) -> np.ndarray:
    """Weight the breached series 0, at any statistic: it is the symptom, not a suspect."""
    extra = np.ones(len(sig.names))
    sla_labels = sla.get("labels") or {}
    breached = ranking.family(sla["metric"])
    for i, name in enumerate(sig.names):
        if ranking.family(name) != breached:
            continue
        if all(sig.labels[i].get(k) == v for k, v in sla_labels.items()):
            extra[i] = 0.0  # the breached series itself, or its p50 beside a p99 SLA
    return extra


def explain(
    tl: Timeline, win: Window, m: Measured, d: Detection, r: Ranking, cfg: Config
) -> Scored:
    """Lower what an earlier or deeper anomaly or a change explains; favour shared causes."""
    step, graph, place = tl.grid.step, tl.graph, r.place
    propagates = node_rules.propagates(m.signals.names)
    tie = _tie(m, d, r, propagates)
    cand = ranking.best_first(r.base, tie)[: cfg.explain_candidates]
    cand = cand[r.base[cand] > 0]
    weight, who = ranking.explained_by(
        cand,
        sev=r.explainer_sev,
        onset_t=d.onset_t,
        p=place,
        graph=graph,
        step=step,
        ratio=cfg.explains_ratio,
        propagates=propagates,
        demand=node_rules.demand(m.signals.names),
        began=grouping.first_onsets(
            m.signals.names, m.signals.labels, d.onset_t, d.anomalies.strength >= cfg.off_z
        ),
        inputs=r.inputs,
    )
    # A resource moving on many nodes at one moment is one event (a shared host, a wave of
    # load): its members are explained by it, but for a move larger than all the others.
    # Latency and errors are left to the calls: they move together as callers wait.
    leader, wave = grouping.waves(
        m.signals.names,
        m.signals.labels,
        r.subjects,
        d.onset_t,
        d.anomalies.strength,
        (r.base > 0) & (d.anomalies.strength >= cfg.off_z) & ~propagates,
        least=cfg.wave_nodes,
    )
    # A node whose anomalies explain those of several of its callers is what they share.
    shared = node_rules.callers_explained(place.primary, who, r.callers)
    joined = (wave > 0) & (leader != np.arange(leader.size)) & (weight < 1.0)
    weight[joined], who[joined] = 1.0, leader[joined]
    changed = np.ones(r.base.size)
    changes = score_changes(
        tl.bundle.changes,
        breach=win.start,
        step=step,
        dist=r.dist,
        known=set(graph.nodes),
        labels=m.signals.labels,
        row_nodes=place.nodes,
        sev=r.explainer_sev,
        onset_t=d.onset_t,
        upstream=_upstream(r, graph),
        cfg=cfg,
    )
    for c in changes:
        for i in c.rows:
            changed[i] *= 1 - cfg.explained * c.score
    late = {
        "explained": 1 - cfg.explained * weight,
        "changed": changed,
        "support": node_rules.support_weight(
            place.primary, shared, step=cfg.support, most=cfg.support_most
        ),
    }
    score = r.base * ranking.combine(late, exponents(cfg))
    return Scored(
        m.signals,
        m.ref,
        d.anomalies,
        place,
        d.onset_t,
        d.lead,
        score,
        tie,
        who,
        wave,
        changes,
        r.factors | late,
    )


def _tie(m: Measured, d: Detection, r: Ranking, propagates: np.ndarray) -> np.ndarray:
    """Return each row's place among equal scores (severity saturates, so ties are common).

    Deeper in the calls first (faults travel up to callers), then a signal that stays on
    its node before latency or errors (which travel), then the larger deviation.
    """
    sig = m.signals
    keys = [sig.identity(i) for i in range(len(sig.names))]
    return ranking.tie_order(keys, r.place.distance, ~propagates, d.anomalies.strength)


def _upstream(r: Ranking, graph: Topology) -> list[set[str]]:
    """Return, per scored row, its node and every node it depends on (empty when unscored)."""
    reach_cache: dict = {}
    upstream: list[set[str]] = []
    for i in range(len(r.place.primary)):
        pnode = r.place.primary[i]
        if r.base[i] <= 0 or pnode is None:
            upstream.append(set())
            continue
        if pnode not in reach_cache:
            reach_cache[pnode] = graph.reaches(pnode) | {pnode}
        upstream.append(reach_cache[pnode])
    return upstream
