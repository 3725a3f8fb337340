"""The change calendar as a timeline: one row per target, one marker per change."""

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


def when(change: dict) -> float | None:
    """Return when a change happened, or is planned to."""
    return change.get("ts") if change.get("ts") is not None else change.get("planned_ts")


def calendar_figure(changes: list[dict], *, window: tuple[float, float], now: float | None = None):
    """Return the timeline: done changes filled, planned ones hollow, unplanned ones ringed red."""
    now = time.time() if now is None else now
    fig = go.Figure()
    for kind, colour in KIND_COLOURS.items():
        mine = [c for c in changes if c.get("kind") == kind and when(c) is not None]
        if not mine:
            continue
        fig.add_trace(
            go.Scatter(
                x=[when(c) * 1000.0 for c in mine],
                y=[plot_text(c.get("target") or "(no target)") for c in mine],
                mode="markers",
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
    fig.add_vline(x=now * 1000.0, line={"color": "#111827", "width": 1, "dash": "dot"})
    targets = {plot_text(c.get("target") or "(no target)") for c in changes}
    fig.update_layout(
        xaxis={"type": "date", "range": [window[0] * 1000.0, window[1] * 1000.0]},
        yaxis={"type": "category", "automargin": True},
        height=140 + 32 * max(1, len(targets)),
        margin={"l": 20, "r": 20, "t": 20, "b": 40},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        plot_bgcolor="white",
    )
    return fig
