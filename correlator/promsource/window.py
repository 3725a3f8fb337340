"""Build an analysis window (a Bundle) with Prometheus series, plus the store when there is one."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from correlator.bundle import Bundle
from correlator.promsource.source import PrometheusSource

if TYPE_CHECKING:
    from sqlalchemy import Engine


EMPTY_TOPOLOGY: dict[str, list] = {"nodes": [], "edges": []}


def prometheus_bundle(
    source: PrometheusSource,
    sla: dict,
    *,
    start: float,
    end: float,
    engine: Engine | None = None,
    topology: dict | None = None,
) -> Bundle:
    """Return the window's bundle: mapped metrics from Prometheus, the rest from any store."""
    if not (math.isfinite(start) and math.isfinite(end)) or end <= start:
        raise ValueError(f"bad window [{start}, {end}]")
    if engine is None:
        series = source.read(names=sorted(source.metrics), start=start, end=end)
        bundle = Bundle(series=series, changes=[], topology=EMPTY_TOPOLOGY, sla=dict(sla))
    else:
        from correlator.store.windows import bundle_for_sla

        with engine.connect() as conn:
            bundle = bundle_for_sla(conn=conn, sla=sla, start=start, end=end, source=source)
    if topology is not None:
        bundle.topology = topology
    bundle.extra["samples"] = sum(int(s.ts.size) for s in bundle.series)
    return bundle
