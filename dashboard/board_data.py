"""Fetch, downsample and assemble everything the joint board draws for one view."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dashboard.client import ApiClient, ApiError, FetchedSeries
from dashboard.downsample import minmax, minmax_grid
from dashboard.figures.board import PanelData
from dashboard.figures.histogram import drift_series
from dashboard.figures.sla import breach_intervals, sla_matches
from dashboard.focus import breach_meets, focus_slas, pick_incident, sla_wants, suspect_wants
from dashboard.panels import PANELS, Panel, model_scope, panel_selectors
from dashboard.selectors import exact, selector
from dashboard.series_panels import Want, custom_panel, group_panels
from dashboard.units import Unit, as_drawn, byte_scaled

MAX_SERIES = 12  # series drawn in one SLA, suspect, service or custom panel
MAX_SELECTED = 48  # series one of a person's selectors may match
MAX_SERVICES = 3  # chosen services whose own metrics get panels
MAX_SERVICE_METRICS = 12
BUILT_IN = ("model", "system")


@dataclass(slots=True)
class BoardView:
    """What one view of the board shows."""

    model: str | None
    start: float
    end: float
    instances: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    gpus: list[str] = field(default_factory=list)
    services: list[str] = field(default_factory=list)
    panels: list[tuple[str, str]] = field(default_factory=list)  # a person's (name, selector)


@dataclass(slots=True)
class BoardData:
    """Everything the board figure needs, what was left out and why, and the fetch time."""

    panels: list[PanelData]
    changes: list[dict]
    breaches: list[tuple[float, float]]
    thresholds: dict[str, list[tuple[float, str]]]
    points: int = 0
    seconds: float = 0.0
    hidden: list[str] = field(default_factory=list)  # panels with no data in the window
    notes: list[str] = field(default_factory=list)  # "no data for X in this window", refusals
    incident: dict | None = None


def related(change: dict, model: str | None, instances: list[str], hosts: list[str]) -> bool:
    """Return whether a change concerns the model, its instances or hosts (or everything)."""
    labels = change.get("labels") or {}
    target = change.get("target") or ""
    if model and (target == f"model:{model}" or labels.get("model") == model):
        return True
    if labels.get("instance") in instances or target.removeprefix("instance:") in instances:
        return True
    if labels.get("host") in hosts or target.removeprefix("host:") in hosts:
        return True
    return not any(k in labels for k in ("model", "instance", "host")) and ":" not in target


def _scope(client: ApiClient, view: BoardView) -> tuple[list[str], list[str]]:
    instances, hosts = model_scope(client.topology(), view.model)
    if view.model and not instances:
        found = client.series(selector("model_requests_per_second", {"model": [view.model]}))
        instances = sorted({s["labels"].get("instance", "") for s in found} - {""})
    return (view.instances or instances), (view.hosts or hosts)


def _get_or_none(read: Callable[[], Any]):
    """Return what a read answers, None when the service refuses it (unreachable: raise)."""
    try:
        return read()
    except ApiError as exc:
        if exc.status == 0:
            raise
        return None


def _service_wants(client: ApiClient, services: list[str]) -> list[Want]:
    wants = []
    for service in services[:MAX_SERVICES]:
        try:
            names = client.label_values(
                "__name__", match=exact(None, {"service": service}), limit=MAX_SERVICE_METRICS
            )
        except ApiError as exc:
            if exc.status == 0:
                raise
            continue
        wants += [Want("service", n, {"service": service}) for n in names]
    return wants


def _custom(client: ApiClient, view: BoardView, notes: list[str]) -> list[Panel]:
    panels = []
    for i, (name, text) in enumerate(view.panels):
        try:
            panel = custom_panel(i, name, text)
            found = client.series(text, limit=MAX_SELECTED + 1)
        except ValueError as exc:
            notes.append(f"cannot draw {text}: {exc}")
            continue
        except ApiError as exc:
            if exc.status == 0:
                raise
            notes.append(f"cannot draw {text}: {exc.message}")
            continue
        if len(found) > MAX_SELECTED:
            notes.append(f"{text} selects more than {MAX_SELECTED} series; narrow it")
            continue
        panels.append(panel)
    return panels


def _identity(s: FetchedSeries) -> tuple:
    return s.name, tuple(sorted(s.labels.items()))


def _panels(client: ApiClient, view: BoardView, mine: list[dict], incident, notes) -> list:
    extra = group_panels(
        sla_wants(mine) + suspect_wants(incident) + _service_wants(client, view.services)
    )
    custom = _custom(client, view, notes)
    return (
        [p for p in extra if p.board == "sla"]
        + custom
        + [p for p in extra if p.board != "sla"]
        + list(PANELS)
    )


def load_board(client: ApiClient, view: BoardView, *, max_points: int = 600) -> BoardData:
    """Fetch the view's series, changes, SLAs and incident, and reduce them for drawing."""
    began = time.perf_counter()
    instances, hosts = _scope(client, view)
    incidents = _get_or_none(client.incidents) or []
    window = (view.start, view.end)
    mine = focus_slas(client.slas(), incidents, view.model, view.services, window)
    names = {str(s["name"]) for s in mine if s.get("name")}
    chosen = pick_incident(incidents, names, *window)
    incident = _get_or_none(lambda: client.incident(int(chosen["id"]))) if chosen else None
    notes: list[str] = []
    panels = _panels(client, view, mine, incident, notes)
    groups = [
        panel_selectors(p, model=view.model, instances=instances, hosts=hosts, gpus=view.gpus)
        for p in panels
    ]
    failed: dict[int, ApiError] = {}
    fetched = client.query_many(groups, *window, step=_step(view, max_points), failed=failed)
    for i, exc in sorted(failed.items()):
        notes.append(f"cannot draw {panels[i].title}: {exc.message}")
    drawn, hidden = _draw(panels, fetched, view, max_points, notes)
    breaches, thresholds = _sla_marks(mine, panels, fetched, drawn)
    declared = _declared(incidents, mine, names, view)
    breaches = _merge(
        breaches + [(a, b) for a, b in declared if not any(a <= d and c <= b for c, d in breaches)]
    )
    notes = _selection_notes(view, fetched) + notes
    changes = [
        c for c in client.changes(view.start, view.end) if related(c, view.model, instances, hosts)
    ]
    changes = mark_suspects(changes, incident)
    points = sum(s.ts.size for p in drawn for s in p.series)
    return BoardData(
        drawn,
        changes,
        breaches,
        thresholds,
        points,
        time.perf_counter() - began,
        hidden,
        notes,
        incident,
    )


def mark_suspects(changes: list[dict], incident: dict | None, top: int = 5) -> list[dict]:
    """Return the changes with ``suspect_rank`` on those among the incident's top suspects."""
    ranks = {
        s.get("id"): s.get("rank")
        for s in ((incident or {}).get("suspects") or [])[:top]
        if s.get("kind") == "change"
    }
    return [
        c | {"suspect_rank": ranks[c.get("id")]} if c.get("id") in ranks else c for c in changes
    ]


def _declared(incidents, mine, names, view: BoardView) -> list[tuple[float, float]]:
    """Return the breaches of the SLAs' incidents, and those declared in sla.json, in the window."""
    window = (view.start, view.end)
    return [
        (float(i["breach_start"]), float(i.get("breach_end") or view.end))
        for i in incidents
        if i.get("sla") in names and breach_meets(i, *window)
    ] + [  # a breach declared by an outside alert, as sla.json's breach_start
        (float(s["breach_start"]), view.end)
        for s in mine
        if s.get("breach_start") is not None and view.start <= float(s["breach_start"]) <= view.end
    ]


def _draw(panels, fetched, view, max_points, notes) -> tuple[list[PanelData], list[str]]:
    """Reduce each panel's series; leave out empty panels and series drawn by an earlier one."""
    seen = {
        _identity(s)
        for p, ss in zip(panels, fetched, strict=True)
        if p.board in BUILT_IN
        for s in ss
    }
    drawn, hidden = [], []
    for panel, series in zip(panels, fetched, strict=True):
        if panel.board not in BUILT_IN and panel.board != "custom":
            fresh = [s for s in series if _identity(s) not in seen]
            seen |= {_identity(s) for s in fresh}
            if series and not fresh:
                continue  # every series is drawn in an earlier panel already
            series = fresh
        if panel.board not in BUILT_IN and len(series) > MAX_SERIES:
            notes.append(f"{panel.title}: {MAX_SERIES} of {len(series)} series drawn")
            series = sorted(series, key=_identity)[:MAX_SERIES]
        data = _reduce(panel, series, max_points, view)
        if any(np.isfinite(s.values).any() for s in data.series):
            drawn.append(data)
        elif panel.board == "custom":
            notes.append(f"no data for {' or '.join(panel.selectors)} in this window")
        elif not panel.optional:
            hidden.append(panel.title)
    return drawn, hidden


def _sla_marks(mine, panels, fetched, drawn) -> tuple[list, dict]:
    """Return the SLAs' breaches found in the data and their thresholds, on the drawn panels."""
    everything = list({_identity(s): s for ss in fetched for s in ss}.values())
    breaches: list[tuple[float, float]] = []
    thresholds: dict[str, list[tuple[float, str]]] = {}
    for sla in mine:
        watched = [s for s in everything if sla_matches(sla, s)]
        breaches += breach_intervals(sla, watched)
        if sla.get("threshold") is None:
            continue
        label = f"{sla.get('name', 'SLA')}: {sla.get('op', '')} {sla['threshold']}"
        for data in drawn:
            if any(sla_matches(sla, s) for s in data.series) or (
                data.panel.board in BUILT_IN and sla.get("metric") in data.panel.metrics
            ):
                thresholds.setdefault(data.panel.key, []).append((float(sla["threshold"]), label))
                break
    return breaches, thresholds


def _selection_notes(view: BoardView, fetched: list[list[FetchedSeries]]) -> list[str]:
    """Return 'no data for X in this window' for each chosen value no fetched series has."""
    labelled = [s.labels for ss in fetched for s in ss if np.isfinite(s.values).any()]
    notes = []
    for key, values in (
        ("model", [view.model] if view.model else []),
        ("service", view.services),
        ("instance", view.instances),
        ("host", view.hosts),
        ("gpu", view.gpus),
    ):
        for value in values:
            if not any(labels.get(key) == value for labels in labelled):
                notes.append(f"no data for {key}={value} in this window")
    return notes


def _merge(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def _step(view: BoardView, max_points: int) -> float:
    """Return the resolution worth asking for (Prometheus ``step``).

    The service keeps each step's lowest and highest sample, the two points a drawn bin
    keeps (``minmax_grid``), so half as many steps as points; from a minute up, whole
    minutes, which the service reads from its 1-minute rollups exactly.
    """
    step = (view.end - view.start) / max(1, max_points // 2)
    if step >= 60.0:
        step = math.ceil(step / 60.0) * 60.0
    return max(15.0, step)


def _reduce(
    panel: Panel, series: list[FetchedSeries], max_points: int, view: BoardView
) -> PanelData:
    if panel.drift:
        return PanelData(panel, drift_series(series, windows=max(4, max_points // 4)))
    out = []
    step = _step(view, max_points)
    first = math.floor(view.start / step) * step  # the service's buckets start at epoch
    bins = max(1, math.ceil((view.end - first) / step))
    for s in series:
        ts, values = as_drawn(s.ts, s.values, Unit(panel.unit, panel.rate, panel.factor))
        if step >= 60.0:  # the service sent each step's extremes: one drawn bin per step
            ts, values = minmax_grid(ts, values, first, first + bins * step, 2 * bins)
        elif ts.size > max_points:
            ts, values = minmax_grid(ts, values, view.start, view.end, max_points)
        else:
            ts, values = minmax(ts, values, max_points)
        out.append(FetchedSeries(s.name, s.labels, ts, values))
    return PanelData(panel, *byte_scaled(out, panel.unit))
