"""An incident's suspects, each drawn against the SLA series on one time axis."""

from __future__ import annotations

import plotly.graph_objects as go

from dashboard.client import Series
from dashboard.figures.board import PALETTE, breach_shape, time_line
from dashboard.figures.clock import walls
from dashboard.figures.text import plot_text, template_text

ROW_HEIGHT = 170


def suspect_label(suspect: dict) -> str:
    """Return a short name of a suspect."""
    if suspect.get("kind") == "change":
        return f"#{suspect.get('rank')} change {suspect.get('id', '')}"
    labels = ",".join(f"{k}={v}" for k, v in sorted((suspect.get("labels") or {}).items()))
    copies = len(suspect.get("members") or [])
    on = f" on {copies} series" if copies else ""  # one signal on sibling series
    return f"#{suspect.get('rank')} {suspect.get('metric', '')}{{{labels}}}{on}"


def incident_figure(
    *,
    sla: dict,
    sla_series: list[Series],
    suspects: list[tuple[dict, list[Series]]],
    breach: tuple[float, float],
    window: tuple[float, float],
    units: list[str] | None = None,
    changes: list[dict] | None = None,
) -> go.Figure:
    """Return stacked rows: the SLA series, then each suspect with its onset marked.

    Suspect ``changes`` are drawn as dashed lines across every row at their time.
    """
    rows = 1 + len(suspects)
    fig = go.Figure()
    gap = 0.04
    height = (1 - gap * (rows - 1)) / rows
    layout: dict = {}
    shapes: list[dict] = []
    annotations: list[dict] = []
    titles = [f"SLA: {sla.get('name', '')} ({sla.get('metric', '')})"]
    titles = [plot_text(t) for t in titles + [suspect_label(s) for s, _ in suspects]]
    groups = [sla_series] + [series for _, series in suspects]
    for i, (title, series) in enumerate(zip(titles, groups, strict=True)):
        axis = "y" if i == 0 else f"y{i + 1}"
        top = 1 - i * (height + gap)
        layout["yaxis" if i == 0 else f"yaxis{i + 1}"] = {
            "domain": [max(0.0, round(top - height, 6)), min(1.0, round(top, 6))],
            "anchor": "x",
            "fixedrange": True,
            "tickfont": {"size": 10},
            "title": {
                "text": plot_text((units or [])[i]) if i < len(units or []) else "",
                "font": {"size": 10},
            },
        }
        annotations.append(
            {
                "text": f"<b>{title}</b>",
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": top,
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 11},
            }
        )
        for k, s in enumerate(series):
            raw = ",".join(f"{a}={b}" for a, b in sorted(s.labels.items())) or s.name
            name = plot_text(raw)
            fig.add_trace(
                go.Scatter(
                    x=walls(s.ts),
                    y=s.values,
                    yaxis=axis,
                    mode="lines",
                    showlegend=False,
                    name=name,
                    line={"color": PALETTE[k % len(PALETTE)], "width": 1.3},
                    hovertemplate=f"{template_text(raw)}: %{{y:.4g}}<extra></extra>",
                )
            )
        if i == 0 and sla.get("threshold") is not None:
            shapes.append(
                {
                    "type": "line",
                    "name": "threshold",
                    "xref": "x domain",
                    "x0": 0,
                    "x1": 1,
                    "yref": axis,
                    "y0": sla["threshold"],
                    "y1": sla["threshold"],
                    "line": {"color": "#dc2626", "dash": "dot", "width": 1.2},
                }
            )
        if i > 0 and suspects[i - 1][0].get("onset") is not None:
            label = {"text": "onset", "textposition": "end", "font": {"size": 10}}
            shapes.append(
                time_line(
                    "onset",
                    suspects[i - 1][0]["onset"],
                    yref=f"{axis} domain",
                    line={"color": "#7c3aed", "width": 2},
                    label=label,
                )
            )
    for change in changes or []:
        if change.get("onset") is None:
            continue
        label = {
            "text": plot_text(suspect_label(change)),
            "textposition": "end",
            "textangle": 0,
            "xanchor": "left",
            "font": {"size": 10, "color": "#ea580c"},
        }
        line = {"color": "#ea580c", "dash": "dash", "width": 1.5}
        shapes.append(time_line("change", change["onset"], line=line, label=label))
    shapes.append(breach_shape(breach[0], breach[1]))
    fig.update_layout(
        **layout,
        xaxis={
            "type": "date",
            "range": walls(window),
            "anchor": f"y{rows}" if rows > 1 else "y",
            "showspikes": True,
            "spikemode": "across",
            "spikesnap": "cursor",
            "spikethickness": 1,
        },
        shapes=shapes,
        annotations=annotations,
        height=ROW_HEIGHT * rows + 80,
        margin={"l": 60, "r": 20, "t": 30, "b": 40},
        hovermode="x",
        hoversubplots="axis",
        plot_bgcolor="white",
    )
    return fig
