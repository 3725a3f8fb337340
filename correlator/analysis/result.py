"""The analysis result and its output document (FORMAT.md's schema plus scope and figures)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from correlator.analysis import confidence, evidence, grouping, kinds, ranking
from correlator.analysis.breach import Breach
from correlator.analysis.changes import ChangeScore
from correlator.analysis.config import Config
from correlator.analysis.kinds import SignalKind, Told
from correlator.analysis.onset import Anomalies, Reference
from correlator.analysis.ranking import Placement
from correlator.analysis.signals import Signals
from correlator.analysis.timeline import Grid, align
from correlator.analysis.topology import Topology, label_nodes
from correlator.bundle import Bundle


@dataclass(frozen=True, slots=True)
class Scored:
    """The scored rows and changes, with what their evidence quotes (the last stage's output)."""

    signals: Signals
    ref: Reference
    anomalies: Anomalies
    place: Placement
    onset_t: np.ndarray  # unix seconds of each row's onset
    lead: np.ndarray  # seconds from each row's onset to the breach start
    score: np.ndarray
    tie: np.ndarray  # each row's place among equal scores (``ranking.tie_order``)
    who: np.ndarray  # row that explains each row, or -1
    wave: np.ndarray  # nodes of the wave each row moved in (``grouping.waves``), else 0
    changes: list[ChangeScore]
    factors: dict[str, np.ndarray]  # the score's factors by name: the score is their product


@dataclass(frozen=True, slots=True)
class AnalysisResult:
    """An analysis: the breach on its grid and, once there is one, the scored suspects."""

    bundle: Bundle
    grid: Grid
    breach: Breach
    config: Config
    graph: Topology
    sla_rows: list[int]  # indices of the bundle's series the SLA covers
    scored: Scored | None = None  # None when the SLA was not breached
    timings: dict[str, float] | None = None

    def to_dict(self) -> dict:
        """Return the output document (FORMAT.md): the breach, its scope, ranked suspects."""
        out = build_result(self)
        if self.timings is not None:
            out["timings"] = self.timings
        return out


def _int(x: float | None) -> int | None:
    return None if x is None or not math.isfinite(x) else int(round(x))


_WHERE = ("instance", "host", "service", "gpu")  # the labels that say where a series is


def scope(r: AnalysisResult) -> dict:
    """Say whether the breach is local (one instance or host) or global (all of them).

    An SLA measured on one series cannot tell: its scope is ``single``, with that series' place.
    """
    rows = [r.bundle.series[i] for i in r.sla_rows]
    if len(rows) < 2:
        where = {k: rows[0].labels[k] for k in _WHERE if k in rows[0].labels} if rows else {}
        return {"kind": "single", "labels": where, "series": len(rows), "affected": len(rows)}
    m = align(rows, r.grid)
    assert r.breach.start is not None  # only asked once a breach was found
    b = int(np.clip(r.grid.index(r.breach.start), 0, r.grid.size - 1))
    post = max(1, math.ceil(r.config.post_s / r.grid.step))
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
        where = {k: lbl[k] for k in _WHERE if k in lbl}
        return {"kind": "local", "labels": where, "series": len(rows), "affected": 1}
    return {"kind": "global", "series": len(rows), "affected": int(bad.size)}


def _nodes_noun(labels: dict[str, str]) -> str:
    """Return what a wave's nodes are, plural: "services" for a series on a service."""
    subject = label_nodes(labels)
    kind = subject[0].partition(":")[0] if subject else ""
    return f"{kind}s" if kind else "nodes"


def _series_suspect(r: AnalysisResult, s: Scored, i: int, kind_of: dict[str, SignalKind]) -> dict:
    sig, a = s.signals, s.anomalies
    name, labels = sig.names[i], sig.labels[i]
    onset_t, lead = float(s.onset_t[i]), float(s.lead[i])
    owner = evidence.owner_of(name, r.graph.owner(s.place.nodes[i]))
    extra: dict = {"z": round(float(a.direction[i] * a.strength[i]), 2)}
    j = int(s.who[i])
    follows = evidence.describe(sig.names[j], sig.labels[j]) if j >= 0 else None
    kind = kind_of[sig.kinds[i]]
    if kind.evidence is not None:
        row = Told(name, labels, sig.payload.get(i), int(a.peak[i]), sig.window, onset_t, lead)
        text, figures = kind.evidence(row)
        extra.update(figures)
    else:
        text = evidence.series_sentence(
            metric=name,
            labels=labels,
            before=float(s.ref.median[i]),
            after=float(sig.matrix[i, int(a.peak[i])]),
            z=extra["z"],
            onset=onset_t,
            lead=lead,
            explained_by=follows,
            rate=kind.per_second,
        )
    if s.wave[i]:
        text += f"; moved at one moment on {s.wave[i]} {_nodes_noun(labels)}"
    return {
        "kind": "series",
        "metric": name,
        "labels": labels,
        "score": float(s.score[i]),
        "onset": _int(onset_t),
        "lead_seconds": _int(lead),
        "owner": owner,
        "evidence": text,
        "node": s.place.primary[i],
        **extra,
    }


def _change_suspect(s: Scored, c: ChangeScore) -> dict:
    confirmed = None
    if c.confirmed_by >= 0:
        sig = s.signals
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


def _suspects(r: AnalysisResult, s: Scored) -> list[dict]:
    """Return the series (sibling copies folded) and changes as suspects, best first."""
    # More rows than listed: copies on sibling series fold into one suspect.
    order = ranking.best_first(s.score, s.tie)[: r.config.top * 3]
    kind_of = kinds.by_name(r.config.kinds)
    found = [_series_suspect(r, s, int(i), kind_of) for i in order if s.score[i] > 0]
    totals = grouping.sibling_counts(s.signals.names, s.signals.labels)
    items = grouping.group_series(found, totals)
    listed = [c for c in s.changes if c.score > 0]
    items += [_change_suspect(s, c) for c in sorted(listed, key=lambda c: str(c.change["id"]))]
    items.sort(key=lambda x: -x["score"])  # stable: equal scores keep the order above
    return items


def build_result(r: AnalysisResult) -> dict:
    """Return the output document: the breach, its scope and the ranked suspects."""
    suspects: list[dict] = []
    out: dict[str, object] = {
        "sla": r.bundle.sla.get("name"),
        "breach_start": _int(r.breach.start),
        "breach_end": _int(r.breach.end),
        "breach_given": r.breach.given,
        "grid_step": r.grid.step,
        "suspects": suspects,
    }
    if r.breach.start is None:
        out["note"] = "the SLA was not breached in the data"
        return out
    out["scope"] = scope(r)
    items = _suspects(r, r.scored) if r.scored is not None else []
    for s in items:
        s["score"] = round(min(max(s["score"], 0.0), 1.0), 4)
    for rank, s in enumerate(items[: r.config.top], start=1):
        suspects.append({"rank": rank, **s})
    # Every fitted case had a real reference: with fewer points the chance is not known.
    thin = r.scored is not None and np.median(r.scored.ref.count) < r.config.min_reference_points
    p = None if thin else confidence.confidence([s["score"] for s in items], len(r.bundle.series))
    out["confidence"] = None if p is None else round(p, 2)
    out["confidence_unlike"] = p is not None and confidence.unseen(len(r.bundle.series))
    return out
