"""The drift kind: a histogram's distribution against its reference, as PSI per window."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from correlator.analysis import drift, evidence, histogram
from correlator.analysis.kinds import BuildContext, KindRow, SignalKind, Told
from correlator.bundle import Series


@dataclass(frozen=True, slots=True)
class DriftPayload:
    """A drift row's histogram and the reference counts its PSI is taken against."""

    hist: histogram.Histogram
    reference: np.ndarray


def build(series: Sequence[Series], ctx: BuildContext) -> tuple[set[int], list[KindRow]]:
    """Take each histogram's buckets (and its _sum, _count) and make one PSI row of it."""
    families = {s.name[: -len("_bucket")] for s in series if s.name.endswith("_bucket")}
    taken = {
        i
        for i, s in enumerate(series)
        if (s.name.endswith("_bucket") and "le" in s.labels)
        or (s.name.endswith(("_sum", "_count")) and s.name.rsplit("_", 1)[0] in families)
    }
    rows = []
    for (name, rest), parts in histogram.group_buckets(list(series)).items():
        h = histogram.build(parts, ctx.grid, name=name, labels=dict(rest))
        counts = histogram.window_sum(h.counts, ctx.window)
        ref = ctx.references.get((name, rest))
        if not isinstance(ref, np.ndarray) or ref.shape[-1] != counts.shape[1]:
            ref = h.counts[ctx.ref_cols].sum(axis=0)
        value = drift.psi(counts, ref)
        value[counts.sum(axis=1) <= 0] = np.nan
        rows.append(KindRow(name, dict(rest), value, DriftPayload(h, ref)))
    return taken, rows


def figures(h: histogram.Histogram, ref_counts, now_counts) -> dict[str, float]:
    """Return PSI, KS, Jensen-Shannon and Wasserstein of a window's counts against the reference."""
    pts = drift.bin_points(h.bounds)
    return {
        "psi": float(drift.psi(now_counts, ref_counts)),
        "ks": float(drift.ks(now_counts, ref_counts)),
        "js": float(drift.jensen_shannon(now_counts, ref_counts)),
        "wasserstein": float(drift.wasserstein(now_counts, ref_counts, pts)),
    }


def told(row: Told) -> tuple[str, dict]:
    """Say how the distribution moved (p95 before and after, PSI) and give the figures."""
    payload = row.payload
    assert isinstance(payload, DriftPayload)
    h, ref = payload.hist, payload.reference
    now = histogram.window_sum(h.counts, row.window)[row.peak]
    found = figures(h, ref, now)
    text = evidence.drift_sentence(
        metric=row.name,
        labels=row.labels,
        p_before=float(histogram.quantile(h.bounds, ref, 0.95)[0]),
        p_after=float(histogram.quantile(h.bounds, now, 0.95)[0]),
        psi=found["psi"],
        level=drift.level(found["psi"]),
        onset=row.onset,
        lead=row.lead,
    )
    return text, {"drift": {k: round(v, 4) for k, v in found.items()}}


# A PSI of PSI_WARN is out of range, whatever the row's own noise; PSI 1 is full severity.
DRIFT = SignalKind(
    "drift",
    build=build,
    directional=False,
    level_floors=False,
    ramps=False,
    interval=True,
    alarm=drift.PSI_WARN,
    full=1.0,
    evidence=told,
)
