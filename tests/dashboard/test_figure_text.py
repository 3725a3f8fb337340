"""User text in figures shows as typed: no markup and no hover-template fields reach Plotly."""

from __future__ import annotations

import numpy as np

from dashboard.client import FetchedSeries
from dashboard.figures.board import PanelData, board_figure
from dashboard.figures.calendar import calendar_figure
from dashboard.figures.incident import incident_figure
from dashboard.figures.text import plot_text, template_text
from dashboard.panels import Panel

T0 = 1_733_140_000.0
MARKUP = "<b>x</b>"
SHOWN = "&lt;b&gt;x&lt;/b&gt;"


def _series(**labels) -> FetchedSeries:
    ts = T0 + np.arange(4) * 15.0
    return FetchedSeries("latency_p99", labels, ts, np.arange(4, dtype=np.float64))


def _texts(fig) -> str:
    """Return every string in the figure, joined (to_json would hide markup as \\u003c)."""
    found: list[str] = []

    def walk(node):
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value)

    walk(fig.to_dict())
    return "\n".join(found)


def test_plot_text_escapes_markup_and_template_fields():
    assert plot_text(MARKUP) == SHOWN
    assert plot_text("a{b} & co") == "a{b} &amp; co"
    assert template_text("%{y} <i>") == "%&#123;y&#125; &lt;i&gt;"
    assert plot_text(None) == ""


def test_board_labels_hovers_titles_and_thresholds_show_markup_literally():
    panel = Panel("p", MARKUP, MARKUP, ("latency_p99",), "fixed", "custom")
    change = {"ts": T0 + 20, "kind": MARKUP, "id": "c1", "summary": MARKUP, "target": MARKUP}
    fig = board_figure(
        [PanelData(panel, [_series(instance=MARKUP)])],
        window=(T0, T0 + 60),
        changes=[change],
        thresholds={"p": [(1.0, MARKUP)]},
    )
    text = _texts(fig)
    assert MARKUP not in text and "<b>" in text  # the figure's own markup stays
    assert SHOWN in fig.data[0].name and SHOWN in fig.data[0].hovertemplate
    assert all(SHOWN in part for part in fig.data[1].hovertext[0].split("<br>")[1:2])
    assert SHOWN in fig.layout.annotations[0].text
    assert fig.layout.annotations[0].text.count(SHOWN) == 2  # the title and its threshold


def test_a_label_cannot_become_a_hover_template_field():
    panel = Panel("p", "t", "s", ("latency_p99",), "fixed", "custom")
    fig = board_figure([PanelData(panel, [_series(instance="%{x}")])], window=(T0, T0 + 60))
    template = fig.data[0].hovertemplate
    assert template.count("%{") == 1 and template.startswith("%&#123;x&#125;")


def test_calendar_and_incident_figures_show_markup_literally():
    change = {"ts": T0, "kind": "config", "target": MARKUP, "summary": MARKUP, "id": MARKUP}
    calendar = calendar_figure([change], window=(T0 - 60, T0 + 60), now=T0)
    trace = calendar.data[0]  # customdata keeps the raw id: it is data, never drawn
    assert calendar.layout.yaxis.ticktext == (SHOWN,) and trace.text == (SHOWN,)
    assert SHOWN in trace.hovertext[0] and MARKUP not in trace.hovertext[0]
    incident = incident_figure(
        sla={"name": MARKUP, "metric": "latency_p99"},
        sla_series=[_series(pod=MARKUP)],
        suspects=[({"rank": 1, "metric": MARKUP, "labels": {"pod": MARKUP}}, [_series()])],
        breach=(T0, T0 + 30),
        window=(T0 - 60, T0 + 60),
        units=[MARKUP, "s"],
    )
    assert MARKUP not in _texts(incident)
    assert SHOWN in incident.layout.annotations[0].text
