"""Read a window of the store as a Bundle (for the analysis) or as one SLA's series."""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Connection, select

from correlator.bundle import Bundle, Series
from correlator.selector import selector_from_labels
from correlator.store.changes import list_changes
from correlator.store.samples import read_range
from correlator.store.series import find_series
from correlator.store.tables import Series as SeriesRow
from correlator.store.topology import read_topology


class MetricSource(Protocol):
    """Serves some metrics from outside the store (``correlator.promsource``); None: store only."""

    @property
    def metrics(self) -> frozenset[str]:
        """Return the names of the metrics it serves."""

    def read(self, *, names, start: float, end: float) -> list[Series]:
        """Return the named metrics' series in [start, end]."""


def bundle_for_sla(
    *,
    conn: Connection,
    sla: dict,
    start: float,
    end: float,
    source: MetricSource | None = None,
) -> Bundle:
    """Return a bundle of every series and change in [start, end] with the SLA given."""
    outside = source.metrics if source is not None else frozenset()
    meta = {
        sid: (name, labels)
        for sid, name, labels in conn.execute(
            select(SeriesRow.id, SeriesRow.name, SeriesRow.labels)
        )
        if name not in outside
    }
    data = read_range(conn=conn, series_ids=meta, start=start, end=end)
    series = [
        Series(name=meta[sid][0], labels=meta[sid][1], ts=d.ts, values=d.values)
        for sid, d in sorted(data.items())
    ]
    if source is not None:
        series += source.read(names=sorted(outside), start=start, end=end)
    return Bundle(
        series=series,
        changes=[c for c in list_changes(conn=conn, start=start, end=end)],
        topology=read_topology(conn=conn),
        sla=dict(sla),
    )


def sla_series(
    *,
    conn: Connection,
    sla: dict,
    start: float,
    end: float,
    source: MetricSource | None = None,
) -> list[Series]:
    """Return the series an SLA covers, with their samples in [start, end]."""
    selector = selector_from_labels(sla["metric"], sla.get("labels") or {})
    if source is not None and sla["metric"] in source.metrics:
        found = source.read(names=[sla["metric"]], start=start, end=end)
        return [s for s in found if selector.matches(s.name, s.labels)]
    stored = find_series(conn=conn, selector=selector)
    data = read_range(conn=conn, series_ids=[s.id for s in stored], start=start, end=end)
    return [
        Series(name=s.name, labels=s.labels, ts=data[s.id].ts, values=data[s.id].values)
        for s in stored
        if s.id in data
    ]
