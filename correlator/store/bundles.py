"""Move incident bundles into and out of the store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sqlalchemy import Engine, select

from collector.schema import series_key
from correlator.bundle import Bundle, Series
from correlator.store.catalog import (
    get_sla,
    list_changes,
    list_slas,
    read_topology,
    upsert_changes,
    upsert_sla,
    upsert_topology,
)
from correlator.store.engine import write_transaction
from correlator.store.samples import insert_rows, read_range, sample_rows
from correlator.store.series import ensure_series
from correlator.store.tables import Series as SeriesRow

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


def import_bundle(
    *, engine: Engine, bundle: Bundle, progress: Progress | None = None
) -> ImportSummary:
    """Store a bundle's metrics, changes, topology and SLA in one transaction."""
    items = {series_key(s.name, s.labels): (s.name, s.labels) for s in bundle.series}
    total = sum(len(s.ts) for s in bundle.series)
    inserted = done = 0
    with write_transaction(engine) as conn:
        ids = ensure_series(conn=conn, items=items)
        group: list[Series] = []
        for i, s in enumerate(bundle.series):
            group.append(s)
            if sum(len(g.ts) for g in group) < 50_000 and i + 1 < len(bundle.series):
                continue
            rows = sample_rows(
                [ids[series_key(g.name, g.labels)] for g in group],
                [g.ts for g in group],
                [g.values for g in group],
            )
            inserted += insert_rows(conn=conn, rows=rows)
            done += len(rows)
            group = []
            if progress:
                progress(done, total)
        if progress and not bundle.series:
            progress(0, 0)
        upsert_changes(conn=conn, changes=bundle.changes)
        upsert_topology(conn=conn, topology=bundle.topology)
        upsert_sla(conn=conn, sla=bundle.sla)
    return ImportSummary(
        series=len(items), samples=total, inserted=inserted, changes=len(bundle.changes)
    )


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
    return Bundle(
        series=series,
        changes=changes,
        topology=topology,
        sla=sla,
        extra={"samples": int(sum(np.size(s.ts) for s in series))},
    )
