"""The change calendar as a timeline: one band per target, one labelled marker per change.

Changes close in time would draw on top of each other (a week's axis puts an hour in a
few pixels), so a target's band has as many lanes as its labelled markers need.
"""

from __future__ import annotations

import time

import plotly.graph_objects as go

from dashboard.figures.board import change_hover
from dashboard.figures.text import plot_text

KIND_COLOURS = {
    "deploy": "#2563eb",
    "config": "#ea580c",
    "feature": "#7c3aed",
    "image": "#0891b2",
    "capacity": "#16a34a",
    "infra": "#4b5563",
}
PLOT_PX = 900  # the narrowest plot width the page gives the timeline, in pixels
MARKER_PX = 16
CHAR_PX = 7  # of a marker's label at font size 11
LANE_PX = 26


def when(change: dict) -> float | None:
    """Return when a change happened, or is planned to."""
    return change.get("ts") if change.get("ts") is not None else change.get("planned_ts")


def _label(change: dict) -> str:
    return str(change.get("id") or change.get("kind") or "")


def lanes(spans: list[tuple[float, float]]) -> list[int]:
    """Return a lane per (start, end) span, lowest first, so that no two in a lane overlap."""
    ends: list[float] = []  # the end of the last span put in each lane
    out = [0] * len(spans)
    for i in sorted(range(len(spans)), key=lambda i: spans[i]):
        start, end = spans[i]
        lane = next((k for k, last in enumerate(ends) if last <= start), len(ends))
        if lane == len(ends):
            ends.append(end)
        else:
            ends[lane] = end
        out[i] = lane
    return out


def positions(
    changes: list[dict], window: tuple[float, float], plot_px: int = PLOT_PX
) -> tuple[list[float], dict[str, float], int]:
    """Return each change's row, the first row of each target and the number of rows.

    A change takes its marker and its label to the right; two that would touch on a
    ``plot_px`` wide plot go to different lanes of their target's band.
    """
    per_px = max(window[1] - window[0], 1.0) / plot_px
    targets = sorted({c.get("target") or "(no target)" for c in changes})
    first: dict[str, float] = {}
    rows = [0.0] * len(changes)
    top = 0
    for target in targets:
        mine = [i for i, c in enumerate(changes) if (c.get("target") or "(no target)") == target]
        spans = []
        for i in mine:
            at = when(changes[i]) or 0.0
            width = MARKER_PX + CHAR_PX * len(_label(changes[i]))
            spans.append((at - per_px * MARKER_PX / 2, at + per_px * width))
        taken = lanes(spans)
        for i, lane in zip(mine, taken, strict=True):
            rows[i] = float(top + lane)
        first[target] = float(top)
        top += max(taken, default=0) + 1
    return rows, first, top


def calendar_figure(
    changes: list[dict],
    *,
    window: tuple[float, float],
    now: float | None = None,
    plot_px: int = PLOT_PX,
):
    """Return the timeline: done changes filled, planned ones hollow, unplanned ones ringed red."""
    now = time.time() if now is None else now
    drawn = [c for c in changes if when(c) is not None]
    rows, first, count = positions(drawn, window, plot_px)
    fig = go.Figure()
    for kind, colour in KIND_COLOURS.items():
        picked = [i for i, c in enumerate(drawn) if c.get("kind") == kind]
        if not picked:
            continue
        mine = [drawn[i] for i in picked]
        fig.add_trace(
            go.Scatter(
                x=[(when(c) or 0.0) * 1000.0 for c in mine],
                y=[rows[i] for i in picked],
                mode="markers+text",
                text=[plot_text(_label(c)) for c in mine],
                textposition="middle right",
                textfont={"size": 11, "color": "#374151"},
                cliponaxis=False,
                name=plot_text(kind),
                marker={
                    "size": 12,
                    "color": colour,
                    "symbol": ["circle-open" if c.get("ts") is None else "circle" for c in mine],
                    "line": {
                        "width": [3 if c.get("unplanned") else 1 for c in mine],
                        "color": ["#dc2626" if c.get("unplanned") else colour for c in mine],
                    },
                },
                hovertext=[change_hover(c) for c in mine],
                hovertemplate="%{hovertext}<extra></extra>",
                customdata=[c.get("id") for c in mine],
            )
        )
    for row in list(first.values())[1:]:  # a rule between two targets' bands
        fig.add_hline(y=row - 0.5, line={"color": "#e5e7eb", "width": 1})
    fig.add_vline(x=now * 1000.0, line={"color": "#111827", "width": 1, "dash": "dot"})
    count = max(count, 1)
    fig.update_layout(
        xaxis={"type": "date", "range": [window[0] * 1000.0, window[1] * 1000.0]},
        yaxis={
            "range": [count - 0.4, -0.6],  # the first target on top
            "tickmode": "array",
            "tickvals": list(first.values()),
            "ticktext": [plot_text(t) for t in first],
            "zeroline": False,
            "automargin": True,
        },
        height=140 + LANE_PX * count,
        margin={"l": 20, "r": 20, "t": 20, "b": 40},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        plot_bgcolor="white",
    )
    return fig
