"""The joint board: model and system panels stacked on one shared time axis."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from dashboard.client import Series
from dashboard.figures.text import plot_text, template_text
from dashboard.panels import Panel
from dashboard.series_panels import ROLE_NAMES, variant_of

PALETTE = ("#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2", "#ca8a04", "#db2777", "#4b5563")
DASHES = {"p50": "dot", "p95": "dash", "p99": "solid", "transmit": "dash"}
OWNER_COLOURS = {"algo": "#7c3aed", "infra": "#0f766e"}
BREACH_FILL = "rgba(220, 38, 38, 0.13)"
PANEL_HEIGHT = 150
LEGEND_ROW = 22  # pixels per legend row
DRIFT_FLOOR = 0.3  # PSI: the drift axis shows at least up to past the 0.25 critical level
LEGEND_PER_ROW = 6
GAP = 0.012


def breach_shape(start: float, end: float) -> dict:
    """Return the shaded rectangle of an SLA breach from ``start`` to ``end`` (unix seconds)."""
    return {
        "type": "rect",
        "name": "breach",
        "xref": "x",
        "x0": start * 1000.0,
        "x1": end * 1000.0,
        "yref": "paper",
        "y0": 0,
        "y1": 1,
        "fillcolor": BREACH_FILL,
        "line": {"width": 0},
        "layer": "below",
    }


def time_line(name: str, at: float, *, line: dict, yref: str = "paper", **more) -> dict:
    """Return a vertical line shape at ``at`` (unix seconds) across ``yref``'s full height."""
    x = at * 1000.0
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
    series: list[Series]
    unit: str | None = None

    @property
    def label(self) -> str:
        """Return the unit the values are in."""
        return self.unit if self.unit is not None else self.panel.unit


def series_key(s: Series) -> str:
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


def _ms(ts) -> np.ndarray:
    return np.asarray(ts, dtype=np.float64) * 1000.0


def _x(ts: np.ndarray) -> dict:
    """Return x as ``x0``/``dx`` for a uniform grid (no array to send), else as an array."""
    if ts.size > 2:
        steps = np.diff(ts)
        if np.allclose(steps, steps[0], rtol=0, atol=1e-3):
            return {"x0": float(ts[0]) * 1000.0, "dx": float(steps[0]) * 1000.0}
    return {"x": _ms(ts)}


def _domains(n: int) -> list[tuple[float, float]]:
    """Return the y domains of n stacked panels, top first."""
    if n < 1:
        return []
    height = (1.0 - GAP * (n - 1)) / n
    tops = [1 - i * (height + GAP) for i in range(n)]
    return [(max(0.0, round(t - height, 6)), min(1.0, round(t, 6))) for t in tops]


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
    changes: list[dict] = (),
    breaches: list[tuple[float, float]] = (),
    thresholds: dict[str, list[tuple[float, str]]] | None = None,
    revision: str = "board",
) -> go.Figure:
    """Return one figure with every panel on the same x axis, changes and breaches marked."""
    thresholds = thresholds or {}
    fig = go.Figure()
    domains = _domains(len(panels))
    colours: dict[str, str] = {}
    legend_seen: set[str] = set()
    layout: dict = {}
    annotations = []
    shapes = []
    for i, (data, domain) in enumerate(zip(panels, domains, strict=True)):
        axis = "y" if i == 0 else f"y{i + 1}"
        ymax = 0.0
        several = len({s.name for s in data.series}) > 1
        for s in sorted(data.series, key=lambda s: (series_key(s), s.name)):
            key = series_key(s)
            colour = colours.setdefault(key, PALETTE[len(colours) % len(PALETTE)])
            variant = _variant(s.name) or (variant_of(s.name) or s.name if several else "")
            raw = f"{key} {variant}".strip()
            name = plot_text(raw)
            finite = s.values[np.isfinite(s.values)]
            if finite.size:
                ymax = max(ymax, float(finite.max()))
            fig.add_trace(
                go.Scatter(
                    **_x(s.ts),
                    y=s.values.astype(np.float32),  # half the bytes; enough for drawing
                    yaxis=axis,
                    mode="lines",
                    name=name,
                    legendgroup=plot_text(key),
                    showlegend=key not in legend_seen,
                    line={"color": colour, "width": 1.4, "dash": DASHES.get(variant, "solid")},
                    hovertemplate=f"{template_text(raw)}: %{{y:.4g}} "
                    f"{template_text(data.label)}<extra></extra>",
                )
            )
            legend_seen.add(key)
        visible = [c for c in changes if c.get("ts") is not None]
        if visible:
            fig.add_trace(
                go.Scatter(
                    x=_ms([c["ts"] for c in visible]),
                    y=[ymax * 1.05 if ymax else 1.0] * len(visible),
                    yaxis=axis,
                    mode="markers",
                    name="changes",
                    legendgroup="changes",
                    showlegend=i == 0,
                    marker={
                        "symbol": "triangle-down",
                        "size": 9,
                        "color": [OWNER_COLOURS.get(c.get("owner"), "#6b7280") for c in visible],
                    },
                    hovertext=[change_hover(c) for c in visible],
                    hovertemplate="%{hovertext}<extra></extra>",
                    meta={"role": "changes"},
                )
            )
        for value, _label in thresholds.get(data.panel.key, []):
            shapes.append(
                {
                    "type": "line",
                    "name": "threshold",
                    "xref": "x domain",
                    "x0": 0,
                    "x1": 1,
                    "yref": axis,
                    "y0": value,
                    "y1": value,
                    "line": {"color": "#dc2626", "width": 1.2, "dash": "dot"},
                }
            )
        axis_layout = {
            "domain": list(domain),
            "anchor": "x",
            "title": {"text": plot_text(data.label), "font": {"size": 10}},
            "tickfont": {"size": 10},
            "rangemode": "tozero",
            "fixedrange": True,
            "showgrid": True,
            "gridcolor": "#eef0f3",
            "zeroline": False,
        }
        if data.label == "PSI":  # drift: below the warning level is noise, kept flat
            axis_layout["range"] = [0, max(DRIFT_FLOOR, ymax * 1.1)]
        layout["yaxis" if i == 0 else f"yaxis{i + 1}"] = axis_layout
        marks = "".join(
            f" <span style='color:#dc2626'>· {plot_text(label)}</span>"
            for _value, label in thresholds.get(data.panel.key, [])
        )
        board = plot_text(ROLE_NAMES.get(data.panel.board, data.panel.board.capitalize()))
        annotations.append(
            {
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
        )
    for change in changes:
        if change.get("ts") is None:
            continue
        line = {
            "color": OWNER_COLOURS.get(change.get("owner"), "#6b7280"),
            "width": 2.5 if change.get("suspect_rank") else 1,
            "dash": "dash",
        }
        name = f"change:{change.get('id', '')}"
        shapes.append(
            time_line(name, change["ts"], line=line, layer="below", **_suspect_label(change))
        )
    shapes.extend(breach_shape(start, end) for start, end in breaches)
    entries = len(legend_seen) + (1 if any(c.get("ts") is not None for c in changes) else 0)
    top = LEGEND_ROW * -(-entries // LEGEND_PER_ROW)  # room above the panels for the legend
    fig.update_layout(
        **layout,
        xaxis={
            "type": "date",
            "range": [window[0] * 1000.0, window[1] * 1000.0],
            "anchor": "y" if len(panels) <= 1 else f"y{len(panels)}",
            "showspikes": True,
            "spikemode": "across",
            "spikesnap": "cursor",
            "spikethickness": 1,
            "spikedash": "dot",
            "spikecolor": "#374151",
            "title": {"text": "time (UTC)", "font": {"size": 11}},
            "showgrid": True,
            "gridcolor": "#eef0f3",
        },
        template="none",
        height=PANEL_HEIGHT * max(1, len(panels)) + 120 + top,
        margin={"l": 60, "r": 20, "t": 30 + top, "b": 50},
        hovermode="x",
        hoversubplots="axis",
        hoverdistance=30,
        spikedistance=-1,
        uirevision=revision,
        showlegend=True,
        legend={
            "orientation": "h",
            "yref": "container",
            "y": 1.0,
            "yanchor": "top",
            "x": 1,
            "xanchor": "right",
        },
        annotations=annotations,
        shapes=shapes,
        plot_bgcolor="white",
        paper_bgcolor="white",
        dragmode="zoom",
    )
    return fig
