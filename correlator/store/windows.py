"""Read a window of the store as a Bundle (for the analysis) or as one SLA's series."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Protocol

from sqlalchemy import Connection, func, select

from correlator.bundle import Bundle, Series
from correlator.selector import selector_from_labels
from correlator.store.changes import list_changes
from correlator.store.tables import SeriesRow
from correlator.store.topology import read_topology
from correlator.store.tsdb import find_series, read_range


class MetricSource(Protocol):
    """Serves some metrics from outside the store (``correlator.promsource``); None: store only."""

    @property
    def metrics(self) -> frozenset[str]:
        """Return the names of the metrics it serves."""

    def read(self, *, names, start: float, end: float) -> list[Series]:
        """Return the named metrics' series in [start, end]."""


class SeriesScope(Protocol):
    """An incident's scope (``correlator.incidents.scope``): what it ranks, by which labels."""

    values: dict[str, dict[str, int]]  # label -> value -> hops from the SLA

    def rank(self, name: str, labels: dict[str, str]) -> int | None:
        """Return a series' distance from the SLA, or None out of scope."""


PAGE = 5_000  # series rows looked at per query while scoping


def bundle_for_sla(
    *,
    conn: Connection,
    sla: dict,
    start: float,
    end: float,
    source: MetricSource | None = None,
    scope: Callable[[], SeriesScope] | None = None,
    max_series: int | None = None,
) -> Bundle:
    """Return a bundle of the series and changes in [start, end] with the SLA given.

    Every series, unless the store and the source hold more than ``max_series``: then only
    those in ``scope()`` (worked out only then) are read, the nearest first, at most
    ``max_series`` in all (a source that can is asked for the scope's series only), and
    ``bundle.extra["scope"]`` says how many were read of how many in scope, and what was
    left out.
    """
    outside = source.metrics if source is not None else frozenset()
    bounded = scope is not None and max_series is not None
    scope = functools.cache(scope) if scope is not None else None
    stored = _count(conn) if bounded else 0
    scoped = bounded and stored > (max_series or 0)
    in_scope = 0
    if scoped:
        assert scope is not None and max_series is not None
        meta, in_scope = _in_scope(conn, outside, scope().rank, max_series)
    else:
        rows = conn.execute(select(SeriesRow.id, SeriesRow.name, SeriesRow.labels))
        meta = {sid: (name, labels) for sid, name, labels in rows if name not in outside}
    data = read_range(conn=conn, series_ids=meta, start=start, end=end)
    series = [
        Series(name=meta[sid][0], labels=meta[sid][1], ts=d.ts, values=d.values)
        for sid, d in sorted(data.items())
    ]
    found: list[Series] = []
    left_out: list[str] = []
    narrow = getattr(source, "read_in_scope", None)  # a Prometheus source can narrow
    counter = getattr(source, "count", None)
    names = sorted(outside)
    if source is not None and bounded and narrow and counter and names:
        assert scope is not None and max_series is not None
        if scoped or stored + counter(names=names, at=end) > max_series:
            found, left_out = narrow(
                names=names, start=start, end=end, values=scope().values, max_series=max_series
            )
            scoped = True
        else:
            found = source.read(names=names, start=start, end=end)
    elif source is not None:
        found = source.read(names=names, start=start, end=end)
    extra: dict = {}
    if bounded and (scoped or len(series) + len(found) > (max_series or 0)):
        assert scope is not None and max_series is not None
        if not in_scope:
            in_scope = len(series)
        ranked = sorted(
            (r, i) for i, s in enumerate(found) if (r := scope().rank(s.name, s.labels)) is not None
        )
        found = [found[i] for _, i in ranked[: max(0, max_series - len(series))]]
        extra["scope"] = {
            "read": len(series) + len(found),
            "in_scope": in_scope + len(ranked),
            "max_series": max_series,
            "capped": in_scope + len(ranked) > max_series,
            "left_out": left_out,
        }
    return Bundle(
        series=series + found,
        changes=[c for c in list_changes(conn=conn, start=start, end=end)],
        topology=read_topology(conn=conn),
        sla=dict(sla),
        extra=extra,
    )


def _count(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(SeriesRow)).scalar_one())


def _in_scope(
    conn: Connection, outside: frozenset[str], rank: Callable[[str, dict], int | None], limit: int
) -> tuple[dict[int, tuple[str, dict]], int]:
    """Return the nearest ``limit`` stored series in scope and how many are in scope.

    The catalogue is looked at a page at a time; only series in scope are kept.
    """
    found: list[tuple[int, int, str, dict]] = []
    after = 0
    while True:
        rows = conn.execute(
            select(SeriesRow.id, SeriesRow.name, SeriesRow.labels)
            .where(SeriesRow.id > after)
            .order_by(SeriesRow.id)
            .limit(PAGE)
        ).all()
        for sid, name, labels in rows:
            if name not in outside and (r := rank(name, labels)) is not None:
                found.append((r, sid, name, labels))
        if len(rows) < PAGE:
            break
        after = rows[-1][0]
    found.sort()
    return {sid: (name, labels) for _, sid, name, labels in found[:limit]}, len(found)


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
