"""Assemble the analysis output (FORMAT.md's schema plus scope, breach end and figures)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from correlator.analysis import drift, evidence, grouping, histogram
from correlator.analysis.breach import Breach
from correlator.analysis.changes import ChangeScore
from correlator.analysis.config import Config
from correlator.analysis.onset import Anomalies, Reference
from correlator.analysis.ranking import Placement
from correlator.analysis.signals import Signals
from correlator.analysis.timeline import Grid, align
from correlator.analysis.topology import Topology
from correlator.bundle import Bundle


@dataclass(slots=True)
class Context:
    """Everything the analysis computed, handed to the output builder."""

    bundle: Bundle
    grid: Grid
    breach: Breach
    config: Config
    graph: Topology
    signals: Signals | None = None
    anomalies: Anomalies | None = None
    score: np.ndarray | None = None
    who: np.ndarray | None = None
    changes: list[ChangeScore] = field(default_factory=list)
    ref: Reference | None = None
    place: Placement | None = None
    agg: np.ndarray | None = None
    sla_rows: list[int] = field(default_factory=list)
    lead: np.ndarray | None = None
    onset_t: np.ndarray | None = None


def _int(x: float | None) -> int | None:
    return None if x is None or not math.isfinite(x) else int(round(x))


def scope(ctx: Context) -> dict:
    """Say whether the breach is local (one instance or host) or global (all of them)."""
    rows = [ctx.bundle.series[i] for i in ctx.sla_rows]
    if len(rows) < 2:
        return {"kind": "global", "series": len(rows)}
    m = align(rows, ctx.grid)
    assert ctx.breach.start is not None  # only asked once a breach was found
    b = int(np.clip(ctx.grid.index(ctx.breach.start), 0, ctx.grid.size - 1))
    post = max(1, math.ceil(ctx.config.post_s / ctx.grid.step))
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            before = np.nanmedian(m[:, : max(b - 1, 1)], axis=1)
            spread = np.nanmedian(np.abs(m[:, : max(b - 1, 1)] - before[:, None]), axis=1)
            now = np.nanmedian(m[:, b : b + post + 1], axis=1)
    dev = np.abs(now - before) / np.maximum(1.4826 * spread, 0.05 * np.abs(before) + 1e-12)
    bad = np.flatnonzero(np.nan_to_num(dev) >= 3.0)
    if bad.size == 1:
        lbl = rows[int(bad[0])].labels
        where = {k: lbl[k] for k in ("instance", "host", "service", "gpu") if k in lbl}
        return {"kind": "local", "labels": where, "series": len(rows), "affected": 1}
    return {"kind": "global", "series": len(rows), "affected": int(bad.size)}


def _series_suspect(ctx: Context, i: int) -> dict:
    sig, a, cfg, place = ctx.signals, ctx.anomalies, ctx.config, ctx.place
    # Only asked for scored rows, and the pipeline sets these along with the score.
    assert sig is not None and a is not None and place is not None and ctx.ref is not None
    assert ctx.score is not None and ctx.onset_t is not None and ctx.lead is not None
    name, labels = sig.names[i], sig.labels[i]
    onset_t, lead = float(ctx.onset_t[i]), float(ctx.lead[i])
    owner = evidence.owner_of(name, ctx.graph.owner(place.nodes[i]))
    extra: dict = {"z": round(float(a.direction[i] * a.strength[i]), 2)}
    j = int(ctx.who[i]) if ctx.who is not None else -1
    follows = evidence.describe(sig.names[j], sig.labels[j]) if j >= 0 else None
    if sig.kinds[i] == "drift":
        h: histogram.Histogram = sig.hists[i]
        ref = sig.ref_counts[i]
        width = max(1, round(cfg.drift_window_s / ctx.grid.step))
        now = histogram.window_sum(h.counts, width)[int(a.peak[i])]
        pts = drift.bin_points(h.bounds)
        figures = {
            "psi": float(drift.psi(now, ref)),
            "ks": float(drift.ks(now, ref)),
            "js": float(drift.jensen_shannon(now, ref)),
            "wasserstein": float(drift.wasserstein(now, ref, pts)),
        }
        extra["drift"] = {k: round(v, 4) for k, v in figures.items()}
        p_before = float(histogram.quantile(h.bounds, ref, 0.95)[0])
        p_after = float(histogram.quantile(h.bounds, now, 0.95)[0])
        text = evidence.drift_sentence(
            metric=name,
            labels=labels,
            p_before=p_before,
            p_after=p_after,
            psi=figures["psi"],
            level=drift.level(figures["psi"]),
            onset=onset_t,
            lead=lead,
        )
    else:
        text = evidence.series_sentence(
            metric=name,
            labels=labels,
            before=float(ctx.ref.median[i]),
            after=float(sig.matrix[i, int(a.peak[i])]),
            z=extra["z"],
            onset=onset_t,
            lead=lead,
            explained_by=follows,
            rate=sig.kinds[i] == "rate",
        )
    node = place.primary[i]
    return {
        "kind": "series",
        "metric": name,
        "labels": labels,
        "score": float(ctx.score[i]),
        "onset": _int(onset_t),
        "lead_seconds": _int(lead),
        "owner": owner,
        "evidence": text,
        "node": node,
        **extra,
    }


def _change_suspect(ctx: Context, c: ChangeScore) -> dict:
    sig = ctx.signals
    confirmed = None
    if c.confirmed_by >= 0:
        assert sig is not None  # a confirming row is a signal row
        confirmed = evidence.describe(sig.names[c.confirmed_by], sig.labels[c.confirmed_by])
    ts = float(c.change["ts"])
    return {
        "kind": "change",
        "id": c.change["id"],
        "score": float(c.score),
        "onset": _int(ts),
        "lead_seconds": _int(c.lead),
        "owner": c.change.get("owner") or "unknown",
        "evidence": evidence.change_sentence(c.change, lead=c.lead, confirmed=confirmed),
        "change_kind": c.change.get("kind"),
        "target": c.change.get("target"),
    }


def build_result(ctx: Context) -> dict:
    """Return the output document: the breach, its scope and the ranked suspects."""
    sla = ctx.bundle.sla
    suspects: list[dict] = []
    out: dict[str, object] = {
        "sla": sla.get("name"),
        "breach_start": _int(ctx.breach.start),
        "breach_end": _int(ctx.breach.end),
        "breach_given": ctx.breach.given,
        "grid_step": ctx.grid.step,
        "suspects": suspects,
    }
    if ctx.breach.start is None:
        out["note"] = "the SLA was not breached in the data"
        return out
    out["scope"] = scope(ctx)
    items: list[dict] = []
    if ctx.score is not None:
        # More rows than listed: copies on sibling series fold into one suspect.
        order = np.argsort(-ctx.score, kind="stable")[: ctx.config.top * 3]
        found = [_series_suspect(ctx, int(i)) for i in order if ctx.score[i] > 0]
        assert ctx.signals is not None  # set along with the score
        totals = grouping.sibling_counts(ctx.signals.names, ctx.signals.labels)
        items += grouping.group_series(found, totals)
    items += [_change_suspect(ctx, c) for c in ctx.changes if c.score > 0.005]
    items.sort(key=lambda s: -s["score"])
    for rank, s in enumerate(items[: ctx.config.top], start=1):
        s["score"] = round(min(max(s["score"], 0.0), 1.0), 4)
        suspects.append({"rank": rank, **s})
    return out
