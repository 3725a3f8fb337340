"""An incident's suspects, each drawn against the SLA series on one time axis."""

from __future__ import annotations

import plotly.graph_objects as go

from dashboard.client import FetchedSeries
from dashboard.figures.board import PALETTE, breach_shape, line_mode, threshold_line, time_line
from dashboard.figures.clock import walls
from dashboard.figures.text import plot_text, template_text

ROW_HEIGHT = 170
ROW_GAP = 0.04  # between rows, as a share of the figure


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
    sla_series: list[FetchedSeries],
    suspects: list[tuple[dict, list[FetchedSeries]]],
    breach: tuple[float, float],
    window: tuple[float, float],
    units: list[str] | None = None,
    changes: list[dict] | None = None,
) -> go.Figure:
    """Return stacked rows: the SLA series, then each suspect with its onset marked.

    Suspect ``changes`` are drawn as dashed lines across every row at their time.
    """
    rows = 1 + len(suspects)
    units = units or []
    fig = go.Figure()
    height = (1 - ROW_GAP * (rows - 1)) / rows
    layout: dict = {}
    shapes: list[dict] = []
    annotations: list[dict] = []
    titles = [f"SLA: {sla.get('name', '')} ({sla.get('metric', '')})"]
    titles = [plot_text(t) for t in titles + [suspect_label(s) for s, _ in suspects]]
    groups = [sla_series] + [series for _, series in suspects]
    for i, (title, series) in enumerate(zip(titles, groups, strict=True)):
        axis = "y" if i == 0 else f"y{i + 1}"
        top = 1 - i * (height + ROW_GAP)
        unit = units[i] if i < len(units) else ""
        layout["yaxis" if i == 0 else f"yaxis{i + 1}"] = _row_axis(top, height, unit)
        annotations.append(_row_title(title, top))
        for trace in _row_lines(series, axis):
            fig.add_trace(trace)
        if i == 0 and sla.get("threshold") is not None:
            shapes.append(threshold_line(sla["threshold"], "x", axis))
        if i > 0 and suspects[i - 1][0].get("onset") is not None:
            shapes.append(_onset_line(suspects[i - 1][0]["onset"], axis))
    shapes += [_change_line(c) for c in changes or [] if c.get("onset") is not None]
    marks = [s["onset"] for s, _ in suspects if s.get("onset") is not None]
    marks += [c["onset"] for c in changes or [] if c.get("onset") is not None]
    shapes.append(breach_shape(breach[0], breach[1]))
    fig.update_layout(
        **layout,
        xaxis={
            "type": "date",
            "range": walls(shown_range(window, groups, [breach[0], *marks])),
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


def shown_range(window: tuple[float, float], groups: list[list[FetchedSeries]], marks: list[float]):
    """Return the window cut to the span its rows have points in, with the marks in view.

    An open incident's window runs 45 min past its breach; an imported one's data may cover
    a fraction of it. The marks (breach, onsets, changes) stay in view. Without points the
    whole window is shown.
    """
    spans = [(float(s.ts.min()), float(s.ts.max())) for rows in groups for s in rows if s.ts.size]
    if not spans:
        return window
    lo = min(a for a, _ in spans + [(m, m) for m in marks])
    hi = max(b for _, b in spans + [(m, m) for m in marks])
    pad = max(0.02 * (hi - lo), 60.0)
    return max(window[0], lo - pad), min(window[1], hi + pad)


def _row_axis(top: float, height: float, unit: str) -> dict:
    """Return a row's value axis, its unit as title."""
    return {
        "domain": [max(0.0, round(top - height, 6)), min(1.0, round(top, 6))],
        "anchor": "x",
        "fixedrange": True,
        "tickfont": {"size": 10},
        "title": {"text": plot_text(unit), "font": {"size": 10}},
    }


def _row_title(title: str, top: float) -> dict:
    """Return a row's title above its top left corner."""
    return {
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


def _row_lines(series: list[FetchedSeries], axis: str) -> list[go.Scatter]:
    """Return a row's series as lines, named by their labels on hover."""
    traces = []
    for k, s in enumerate(series):
        raw = ",".join(f"{a}={b}" for a, b in sorted(s.labels.items())) or s.name
        traces.append(
            go.Scatter(
                x=walls(s.ts),
                y=s.values,
                yaxis=axis,
                mode=line_mode(s.values),
                showlegend=False,
                name=plot_text(raw),
                line={"color": PALETTE[k % len(PALETTE)], "width": 1.3},
                hovertemplate=f"{template_text(raw)}: %{{y:.4g}}<extra></extra>",
            )
        )
    return traces


def _onset_line(onset: float, axis: str) -> dict:
    """Return a suspect's onset across its row."""
    label = {"text": "onset", "textposition": "start", "font": {"size": 10}}
    line = {"color": "#7c3aed", "width": 2}
    return time_line("onset", onset, yref=f"{axis} domain", line=line, label=label)


def _change_line(change: dict) -> dict:
    """Return a suspect change across every row at its time, labelled with its rank."""
    label = {
        "text": plot_text(suspect_label(change)),
        "textposition": "end",
        "textangle": 0,
        "xanchor": "left",
        "font": {"size": 10, "color": "#ea580c"},
    }
    line = {"color": "#ea580c", "dash": "dash", "width": 1.5}
    return time_line("change", change["onset"], line=line, label=label)
