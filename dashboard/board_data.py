"""Fetch, downsample and assemble everything the joint board draws for one view."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from dashboard.client import ApiClient, ApiError, Series
from dashboard.downsample import minmax, minmax_grid
from dashboard.figures.board import PanelData
from dashboard.figures.histogram import drift_series
from dashboard.figures.sla import breach_intervals
from dashboard.panels import PANELS, Panel, model_scope, panel_selectors


@dataclass(slots=True)
class BoardView:
    """What one view of the board shows."""

    model: str
    start: float
    end: float
    instances: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    gpus: list[str] = field(default_factory=list)


@dataclass(slots=True)
class BoardData:
    """Everything the board figure needs, plus how long fetching took."""

    panels: list[PanelData]
    changes: list[dict]
    breaches: list[tuple[float, float]]
    thresholds: dict[str, list[tuple[float, str]]]
    points: int = 0
    seconds: float = 0.0


def related(change: dict, model: str, instances: list[str], hosts: list[str]) -> bool:
    """Return whether a change concerns the model, its instances or hosts (or everything)."""
    labels = change.get("labels") or {}
    target = change.get("target") or ""
    if target in (f"model:{model}",) or labels.get("model") == model:
        return True
    if labels.get("instance") in instances or target.removeprefix("instance:") in instances:
        return True
    if labels.get("host") in hosts or target.removeprefix("host:") in hosts:
        return True
    return not any(k in labels for k in ("model", "instance", "host")) and ":" not in target


def _scope(client: ApiClient, view: BoardView) -> tuple[list[str], list[str]]:
    instances, hosts = model_scope(client.topology(), view.model)
    if not instances:
        found = client.series(f'model_requests_per_second{{model="{view.model}"}}')
        instances = sorted({s["labels"].get("instance", "") for s in found} - {""})
    return (view.instances or instances), (view.hosts or hosts)


def _incident_breaches(client: ApiClient, slas: list[dict], end: float) -> list:
    names = {s["name"] for s in slas}
    try:
        incidents = client.get("/api/v1/incidents")
    except ApiError:
        return []
    return [
        (float(i["breach_start"]), float(i.get("breach_end") or end))
        for i in incidents
        if i.get("sla") in names and i.get("breach_start") is not None
    ]


def _merge(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def load_board(client: ApiClient, view: BoardView, *, max_points: int = 600) -> BoardData:
    """Fetch the view's series, changes and SLAs and reduce them for drawing."""
    began = time.perf_counter()
    instances, hosts = _scope(client, view)
    groups: list[list[str]] = []
    for panel in PANELS:
        groups.append(
            panel_selectors(
                panel, model=view.model, instances=instances, hosts=hosts, gpus=view.gpus
            )
        )
    fetched = client.query_many(groups, view.start, view.end, step=_step(view, max_points))
    slas = [s for s in client.slas() if s.get("labels", {}).get("model") == view.model]
    breaches = []
    thresholds: dict[str, list[tuple[float, str]]] = {}
    for sla in slas:
        for panel, series in zip(PANELS, fetched, strict=True):
            if sla.get("metric") in panel.metrics:
                breaches += breach_intervals(sla, series)
                if sla.get("threshold") is not None:
                    label = f"{sla.get('name', 'SLA')}: {sla.get('op', '')} {sla['threshold']}"
                    thresholds.setdefault(panel.key, []).append((float(sla["threshold"]), label))
    declared = [
        (a, b)
        for a, b in _incident_breaches(client, slas, view.end)
        if not any(a <= d1 and c0 <= b for c0, d1 in breaches)
    ]
    breaches = _merge(breaches + declared)
    panels = []
    points = 0
    for panel, series in zip(PANELS, fetched, strict=True):
        drawn = _reduce(panel, series, max_points, view)
        points += sum(s.ts.size for s in drawn)
        panels.append(PanelData(panel, drawn))
    changes = [
        c for c in client.changes(view.start, view.end) if related(c, view.model, instances, hosts)
    ]
    return BoardData(panels, changes, breaches, thresholds, points, time.perf_counter() - began)


def _step(view: BoardView, max_points: int) -> float:
    """Return the resolution worth asking for (Prometheus ``step``)."""
    return max(15.0, (view.end - view.start) / max_points)


def _reduce(panel: Panel, series: list[Series], max_points: int, view: BoardView) -> list:
    if panel.drift:
        return drift_series(series, windows=max(4, max_points // 4))
    out = []
    for s in series:
        if s.ts.size > max_points:
            ts, values = minmax_grid(s.ts, s.values, view.start, view.end, max_points)
        else:
            ts, values = minmax(s.ts, s.values, max_points)
        out.append(Series(s.name, s.labels, ts, values))
    return out
