"""Move incident bundles into and out of the store."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import Engine, select

from collector.schema import series_key
from correlator.bundle import Bundle, Series
from correlator.store.changes import list_changes, upsert_changes
from correlator.store.engine import write_transaction
from correlator.store.recordings import (
    list_recordings,
    read_baseline,
    recording_overlapping,
    save_recording,
)
from correlator.store.slas import get_sla, list_slas, upsert_sla
from correlator.store.tables import SeriesRow
from correlator.store.topology import read_topology, upsert_topology
from correlator.store.tsdb import ensure_series, insert_columns, read_range, sample_columns

Progress = Callable[[int, int], None]


class ExportError(ValueError):
    """An export that cannot be written as asked."""


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What an import added."""

    series: int
    samples: int
    inserted: int
    changes: int
    window: tuple[float, float] | None = None
    baseline_series: int = 0
    skipped: list[str] = field(default_factory=list)


def import_bundle(
    *, engine: Engine, bundle: Bundle, progress: Progress | None = None, now: float | None = None
) -> ImportSummary:
    """Store a bundle's metrics, changes, topology, SLA, window and baseline in one transaction."""
    kept = [s for s in bundle.series if len(s.ts)]
    items = {series_key(s.name, s.labels): (s.name, s.labels) for s in kept}
    total = sum(len(s.ts) for s in kept)
    inserted = done = 0
    sla = {k: v for k, v in bundle.sla.items() if k != "breach_start"}
    window = (
        (min(float(s.ts[0]) for s in kept), max(float(s.ts[-1]) for s in kept)) if kept else None
    )
    with write_transaction(engine) as conn:
        ids = ensure_series(conn=conn, items=items)
        group: list[Series] = []
        for i, s in enumerate(kept):
            group.append(s)
            if sum(len(g.ts) for g in group) < 50_000 and i + 1 < len(kept):
                continue
            cols = sample_columns(
                [ids[series_key(g.name, g.labels)] for g in group],
                [g.ts for g in group],
                [g.values for g in group],
            )
            inserted += insert_columns(conn=conn, cols=cols)
            done += len(cols)
            group = []
            if progress:
                progress(done, total)
        if progress and not kept:
            progress(0, 0)
        upsert_changes(conn=conn, changes=bundle.changes)
        upsert_topology(conn=conn, topology=bundle.topology)
        upsert_sla(conn=conn, sla=sla)
        if window is not None:
            save_recording(
                conn=conn,
                sla=sla["name"],
                start=window[0],
                end=window[1],
                breach_start=bundle.sla.get("breach_start"),
                source=bundle.path.name if bundle.path else "",
                baseline=bundle.baseline,
                now=time.time() if now is None else now,
            )
    return ImportSummary(
        series=len(items),
        samples=total,
        inserted=inserted,
        changes=len(bundle.changes),
        window=window,
        baseline_series=len(bundle.baseline or []),
        skipped=_skipped(bundle, kept),
    )


def _skipped(bundle: Bundle, kept: list[Series]) -> list[str]:
    """Say what of the bundle was not stored."""
    out = []
    empty = len(bundle.series) - len(kept)
    if empty:
        out.append(f"{empty} series with no samples")
    if bundle.path is not None:
        known = {"metrics", "changes", "topology", "sla", "baseline"}
        for f in sorted(bundle.path.iterdir()):
            stem = f.name.removesuffix(".gz").removesuffix(".json")
            if f.name == "truth.json":
                out.append("truth.json (ground truth for scoring; never read)")
            elif stem not in known or not f.name.startswith(stem + ".json"):
                out.append(f"{f.name} (not part of the bundle format)")
    return out


def export_bundle(
    *, engine: Engine, start: float, end: float, sla_name: str | None = None
) -> Bundle:
    """Return a bundle of every series, change and the SLA in [start, end]."""
    if end <= start:
        raise ExportError(f"--to ({end}) must be after --from ({start})")
    with engine.connect() as conn:
        if sla_name:
            sla = get_sla(conn=conn, name=sla_name)
            if sla is None:
                names = ", ".join(s["name"] for s in list_slas(conn=conn)) or "none stored"
                raise ExportError(f"no SLA named {sla_name!r} (known: {names})")
        else:
            slas = list_slas(conn=conn)
            if not slas:
                raise ExportError("no SLA is stored; add or import one first")
            if len(slas) > 1:
                names = ", ".join(repr(s["name"]) for s in slas)
                raise ExportError(f"several SLAs are stored; choose one with --sla ({names})")
            sla = slas[0]
        meta = {
            sid: (name, labels)
            for sid, name, labels in conn.execute(
                select(SeriesRow.id, SeriesRow.name, SeriesRow.labels)
            )
        }
        data = read_range(conn=conn, series_ids=meta, start=start, end=end)
        series = [
            Series(name=meta[sid][0], labels=meta[sid][1], ts=d.ts, values=d.values)
            for sid, d in sorted(data.items())
        ]
        changes = list_changes(conn=conn, start=start, end=end)
        topology = read_topology(conn=conn)
        recorded = recording_overlapping(conn=conn, sla=sla["name"], start=start, end=end)
        baseline = None
        if recorded is not None:
            baseline = read_baseline(conn=conn, recording_id=recorded.id)
            if recorded.breach_start is not None:
                sla = {**sla, "breach_start": recorded.breach_start}
    return Bundle(
        series=series,
        changes=changes,
        topology=topology,
        sla=sla,
        baseline=baseline,
        extra={"samples": int(sum(np.size(s.ts) for s in series))},
    )


def recorded_window(*, engine: Engine, sla_name: str | None) -> tuple[float, float]:
    """Return the window of the newest recording (of one SLA when named), for an export."""
    with engine.connect() as conn:
        found = list_recordings(conn=conn, sla=sla_name)
    if not found:
        what = f"of SLA {sla_name!r} " if sla_name else ""
        raise ExportError(f"no imported incident {what}is stored; give --from and --to")
    last = max(found, key=lambda w: (w.end, w.id))
    return last.start, last.end
