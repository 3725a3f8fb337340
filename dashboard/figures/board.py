"""The joint board: model and system panels stacked on one shared time axis."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from dashboard.client import FetchedSeries
from dashboard.figures.clock import MS_PER_S, wall, walls
from dashboard.figures.text import plot_text, template_text
from dashboard.panels import Panel
from dashboard.series_panels import ROLE_NAMES, variant_of

PALETTE = (
    "#2563eb",
    "#ea580c",
    "#16a34a",
    "#9333ea",
    "#0891b2",
    "#ca8a04",
    "#db2777",
    "#4b5563",
    "#65a30d",
    "#4f46e5",
)
DASHES = {
    "p50": "dot",
    "p90": "dashdot",
    "p95": "dash",
    "p99": "solid",
    "avg": "longdash",
    "transmit": "dash",
}
OWNER_COLOURS: dict[str | None, str] = {"algo": "#7c3aed", "infra": "#0f766e"}
BREACH_FILL = "rgba(220, 38, 38, 0.13)"
PANEL_HEIGHT = 150  # pixels of one panel's plot area
GAP_PX = 44  # between panels: the time labels of one and the title row of the next
TOP_PX = 30  # above the first panel: its title row
BOTTOM_PX = 30  # below the last panel: its time labels
MAX_LEGEND = 6  # entries in a panel's own legend; more are named on hover only
DRIFT_FLOOR = 0.3  # PSI: the drift axis shows at least up to past the 0.25 critical level
# Significant digits sent of each value: what the hover shows (%{y:.4g}); every y axis starts
# at zero, so the rounding moves a line by under a thousandth of its panel's height.
DIGITS = 4


def breach_shape(start: float, end: float, offset: float = 0.0) -> dict:
    """Return the shaded rectangle of an SLA breach from ``start`` to ``end`` (unix seconds)."""
    return {
        "type": "rect",
        "name": "breach",
        "xref": "x",
        "x0": wall(start, offset),
        "x1": wall(end, offset),
        "yref": "paper",
        "y0": 0,
        "y1": 1,
        "fillcolor": BREACH_FILL,
        "line": {"width": 0},
        "layer": "below",
    }


def time_line(
    name: str, at: float, *, line: dict, yref: str = "paper", offset: float = 0.0, **more
) -> dict:
    """Return a vertical line shape at ``at`` (unix seconds) across ``yref``'s full height."""
    x = wall(at, offset)
    return {
        "type": "line",
        "name": name,
        "xref": "x",
        "x0": x,
        "x1": x,
        "yref": yref,
        "y0": 0,
        "y1": 1,
        "line": line,
        **more,
    }


@dataclass(slots=True)
class PanelData:
    """A panel, the (already downsampled) series to draw in it and their unit when rescaled."""

    panel: Panel
    series: list[FetchedSeries]
    unit: str | None = None

    @property
    def label(self) -> str:
        """Return the unit the values are in."""
        return self.unit if self.unit is not None else self.panel.unit


def series_key(s: FetchedSeries) -> str:
    """Return the entity a series belongs to (instance, host/gpu or host): its colour."""
    if "gpu" in s.labels:
        return f"{s.labels.get('host', '')}/gpu{s.labels['gpu']}"
    for key in ("instance", "pod", "host", "service"):
        if s.labels.get(key):
            return s.labels[key]
    return s.name


def _variant(name: str) -> str:
    for word in DASHES:
        if word in name:
            return word
    return ""


def line_mode(values) -> str:
    """Return how to draw a series: a line, with markers when too few points make a line."""
    return "lines+markers" if np.isfinite(np.asarray(values, dtype=float)).sum() <= 2 else "lines"


def _x(ts, offset: float = 0.0) -> dict:
    """Return x as ``x0``/``dx`` for a uniform grid (no array to send), else as an array."""
    ts = np.asarray(ts, dtype=np.float64)
    if ts.size > 2:
        steps = np.diff(ts)
        if np.allclose(steps, steps[0], rtol=0, atol=1e-3):
            return {"x0": wall(float(ts[0]), offset), "dx": float(steps[0]) * MS_PER_S}
    return {"x": walls(ts, offset)}


def _plot_height(n: int) -> int:
    """Return the pixel height of n stacked panels and the gaps between them."""
    return PANEL_HEIGHT * n + GAP_PX * max(0, n - 1)


def _domains(n: int) -> list[tuple[float, float]]:
    """Return the y domains of n stacked panels, top first, with fixed pixel gaps."""
    if n < 1:
        return []
    total = _plot_height(n)
    out = []
    for i in range(n):
        top = total - i * (PANEL_HEIGHT + GAP_PX)
        out.append(
            (max(0.0, round((top - PANEL_HEIGHT) / total, 6)), min(1.0, round(top / total, 6)))
        )
    return out


def _colour(key: str, used: set[str], colours: dict[str, str]) -> str:
    """Return an entity's colour: the same in every panel unless taken in this one."""
    colour = colours.get(key)
    if colour is None or colour in used:
        free = [c for c in PALETTE if c not in used] or list(PALETTE)
        fresh = [c for c in free if c not in colours.values()]
        colour = (fresh or free)[0]
        colours.setdefault(key, colour)
    used.add(colour)
    return colour


def _shifted(changes, breaches, offset: float) -> tuple[list[dict], list[tuple[float, float]]]:
    """Return changes and breaches moved by ``offset`` seconds (a time zone's offset)."""
    moved = [{**c, "ts": c["ts"] + offset} if c.get("ts") is not None else dict(c) for c in changes]
    return moved, [(a + offset, b + offset) for a, b in breaches]


def change_hover(change: dict) -> str:
    """Return the hover text of a change marker."""
    flag = " (unplanned)" if change.get("unplanned") else ""
    who = change.get("person") or change.get("author") or change.get("owner", "")
    kind, ident, summary, target = (
        plot_text(change.get(k, "")) for k in ("kind", "id", "summary", "target")
    )
    return f"<b>{kind}</b>{flag} {ident}<br>{summary}<br>{target} · {plot_text(who)}"


def _suspect_label(change: dict) -> dict:
    """Return the label of a change the incident ranks as a suspect ('#1 suspect')."""
    if not change.get("suspect_rank"):
        return {}
    text = f"#{int(change['suspect_rank'])} suspect: {plot_text(change.get('id', ''))}"
    return {"label": {"text": text, "textposition": "end", "font": {"size": 10}}}


def board_figure(
    panels: list[PanelData],
    *,
    window: tuple[float, float],
    changes: Sequence[dict] = (),
    breaches: Sequence[tuple[float, float]] = (),
    thresholds: dict[str, list[tuple[float, str]]] | None = None,
    revision: str = "board",
    offset: float = 0.0,
) -> go.Figure:
    """Return one figure of stacked panels on matched time axes, changes and breaches marked.

    Each panel has its own time labels, legend and hover; zooming one zooms all. ``offset``
    (seconds) moves every time, so the axes read in a local zone rather than UTC.
    """
    thresholds = thresholds or {}
    total = _plot_height(len(panels))
    colours: dict[str, str] = {}
    traces: list[dict] = []
    layout: dict = {}
    annotations, shapes = [], []
    visible = [c for c in changes if c.get("ts") is not None]
    for i, (data, domain) in enumerate(zip(panels, _domains(len(panels)), strict=True)):
        suffix = "" if i == 0 else str(i + 1)
        xaxis, yaxis, legend = f"x{suffix}", f"y{suffix}", f"legend{suffix}"
        lines, ymax, legible = _series_lines(i, data, colours, offset)
        traces += lines
        if visible:
            traces.append(_change_markers(visible, xaxis, yaxis, ymax, offset))
        marks = thresholds.get(data.panel.key, [])
        shapes += [threshold_line(value, xaxis, yaxis) for value, _label in marks]
        layout[f"yaxis{suffix}"] = _value_axis(data, domain, xaxis, ymax)
        layout[f"xaxis{suffix}"] = _time_axis(window, offset, anchor=yaxis, first=i == 0)
        if legible:
            layout[legend] = _legend(domain, total)
        annotations.append(_panel_title(data, domain, [label for _value, label in marks]))
    shapes += [_change_line(change, offset) for change in visible]
    shapes.extend(breach_shape(start, end, offset) for start, end in breaches)
    layout.update(
        template=pio.templates["none"],
        height=total + TOP_PX + BOTTOM_PX,
        margin={"l": 60, "r": 20, "t": TOP_PX, "b": BOTTOM_PX},
        hovermode="x unified",
        hoverdistance=30,
        spikedistance=-1,
        uirevision=revision,
        showlegend=True,
        annotations=annotations,
        shapes=shapes,
        plot_bgcolor="white",
        paper_bgcolor="white",
        dragmode="zoom",
    )
    # Built as plain dicts, unchecked: plotly's validation took 0.5 s for 16 panels.
    return go.Figure(data=traces, layout=layout, _validate=False)


def _series_lines(
    i: int, data: PanelData, colours: dict[str, str], offset: float
) -> tuple[list[dict], float, bool]:
    """Return panel ``i``'s line traces, its highest value and whether it shows a legend.

    One colour per entity (instance, host, GPU), the same across panels; line styles tell
    a metric's variants (p50, p95, p99) apart.
    """
    suffix = "" if i == 0 else str(i + 1)
    ymax = 0.0
    several = len({s.name for s in data.series}) > 1
    ordered = sorted(data.series, key=lambda s: (series_key(s), s.name))
    keys = list(dict.fromkeys(series_key(s) for s in ordered))
    # One entity drawn as several statistics (avg, p50, p99): the legend names the statistic.
    by_variant = len(keys) == 1 and several
    legible = 1 < len(keys) <= MAX_LEGEND or by_variant
    used: set[str] = set()
    panel_colours = {key: _colour(key, used, colours) for key in keys}
    seen: set[str] = set()
    traces = []
    for s in ordered:
        key = series_key(s)
        variant = _variant(s.name) or (variant_of(s.name) or s.name if several else "")
        raw = f"{key} {variant}".strip()
        finite = s.values[np.isfinite(s.values)]
        if finite.size:
            ymax = max(ymax, float(finite.max()))
        traces.append(
            _scatter(
                **_x(s.ts, offset),
                y=significant(s.values),
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                mode=line_mode(s.values),
                name=plot_text(variant if by_variant else key if legible else raw),
                legend=f"legend{suffix}",
                legendgroup=f"{i}:{plot_text(raw if by_variant else key)}",
                showlegend=legible and (by_variant or key not in seen),
                line={
                    "color": panel_colours[key],
                    "width": 1.4,
                    "dash": DASHES.get(variant, "solid"),
                },
                hovertemplate=f"{template_text(raw)}: %{{y:.{DIGITS}g}} "
                f"{template_text(data.label)}<extra></extra>",
            )
        )
        seen.add(key)
    return traces, ymax, legible


def _change_markers(
    visible: list[dict], xaxis: str, yaxis: str, ymax: float, offset: float
) -> dict:
    """Return a panel's change markers: a triangle per change above its highest value."""
    return _scatter(
        x=walls([c["ts"] for c in visible], offset),
        y=[ymax * 1.05 if ymax else 1.0] * len(visible),
        xaxis=xaxis,
        yaxis=yaxis,
        mode="markers",
        name="change",
        showlegend=False,
        marker={
            "symbol": "triangle-down",
            "size": 9,
            "color": [OWNER_COLOURS.get(c.get("owner"), "#6b7280") for c in visible],
        },
        hovertext=[change_hover(c) for c in visible],
        hovertemplate="%{hovertext}<extra></extra>",
        meta={"role": "changes"},
    )


def threshold_line(value: float, xaxis: str, yaxis: str) -> dict:
    """Return an SLA threshold across one panel."""
    return {
        "type": "line",
        "name": "threshold",
        "xref": f"{xaxis} domain",
        "x0": 0,
        "x1": 1,
        "yref": yaxis,
        "y0": value,
        "y1": value,
        "line": {"color": "#dc2626", "width": 1.2, "dash": "dot"},
    }


def _value_axis(data: PanelData, domain: tuple[float, float], xaxis: str, ymax: float) -> dict:
    """Return a panel's value axis: from zero, its unit as title; drift at least to 0.3 PSI."""
    axis = {
        "domain": list(domain),
        "anchor": xaxis,
        "title": {"text": plot_text(data.label), "font": {"size": 10}},
        "tickfont": {"size": 10},
        "rangemode": "tozero",
        "fixedrange": True,
        "showgrid": True,
        "gridcolor": "#eef0f3",
        "zeroline": False,
    }
    if data.label == "PSI":  # drift: below the warning level is noise, kept flat
        axis["range"] = [0, max(DRIFT_FLOOR, ymax * 1.1)]
    return axis


def _legend(domain: tuple[float, float], total: int) -> dict:
    """Return a panel's own legend, on one line above its top right corner."""
    return {
        "orientation": "h",
        "xref": "paper",
        "yref": "paper",
        "x": 1,
        "xanchor": "right",
        "y": domain[1] + 2 / max(total, 1),
        "yanchor": "bottom",
        "font": {"size": 10},
        "bgcolor": "rgba(255,255,255,0)",
        "itemclick": "toggle",
        "itemdoubleclick": "toggleothers",
    }


def _panel_title(data: PanelData, domain: tuple[float, float], thresholds: list[str]) -> dict:
    """Return a panel's title, its board and its thresholds' names, above its top left."""
    marks = "".join(
        f" <span style='color:#dc2626'>· {plot_text(label)}</span>" for label in thresholds
    )
    board = plot_text(ROLE_NAMES.get(data.panel.board, data.panel.board.capitalize()))
    return {
        "text": f"<b>{plot_text(data.panel.title)}</b> "
        f"<span style='color:#6b7280'>· {board}</span>{marks}",
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": domain[1],
        "xanchor": "left",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 12},
    }


def _change_line(change: dict, offset: float) -> dict:
    """Return a change's line across every panel: its team's colour, thicker as a suspect."""
    line = {
        "color": OWNER_COLOURS.get(change.get("owner"), "#6b7280"),
        "width": 2.5 if change.get("suspect_rank") else 1,
        "dash": "dash",
    }
    return time_line(
        f"change:{change.get('id', '')}",
        change["ts"],
        line=line,
        layer="below",
        offset=offset,
        **_suspect_label(change),
    )


def _scatter(**fields) -> dict:
    """Return a line or marker trace as Plotly's JSON takes it."""
    return {"type": "scatter", **fields}


def significant(values, digits: int = DIGITS) -> list[float | None]:
    """Return values rounded to ``digits`` significant digits, None for a gap (short JSON).

    Dividing the rounded integer by an exact power of ten gives the double nearest the
    decimal, which JSON writes in at most ``digits`` digits; it compresses to about half
    the bytes of a float32 typed array.
    """
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values) & (values != 0)
    exponent = np.zeros(values.shape, dtype=np.int64)
    exponent[finite] = np.floor(np.log10(np.abs(values[finite]))).astype(np.int64)
    shift = np.clip(digits - 1 - exponent, -300, 300)  # decimal places kept; < 0: tens...
    up, down = np.power(10.0, np.clip(shift, 0, None)), np.power(10.0, np.clip(-shift, 0, None))
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = np.where(finite, np.round(values * up / down) * down / up, values)
    return [v if math.isfinite(v) else None for v in rounded.tolist()]


def _time_axis(window: tuple[float, float], offset: float, *, anchor: str, first: bool) -> dict:
    """Return one panel's time axis: labelled, matched to the first panel's, with a spike."""
    axis = {
        "type": "date",
        "range": walls(window, offset),
        "anchor": anchor,
        "showticklabels": True,
        "tickfont": {"size": 9, "color": "#4b5563"},
        "showspikes": True,
        "spikemode": "across",
        "spikesnap": "cursor",
        "spikethickness": 1,
        "spikedash": "dot",
        "spikecolor": "#374151",
        "showgrid": True,
        "gridcolor": "#eef0f3",
    }
    if not first:
        axis["matches"] = "x"
    return axis
