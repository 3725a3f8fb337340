"""Metric browser: every stored metric name with its series count, label names and unit."""

from __future__ import annotations

from urllib.parse import urlencode

import dash
from dash import Input, Output, dcc, html

from dashboard import ids, urlquery
from dashboard.client import ApiError
from dashboard.context import Context, serving
from dashboard.tables import error_box, table
from dashboard.units import unit_of

LIMIT = 1000
MAX_FILTER = 200  # characters of the name filter


def filter_text(value) -> str:
    """Return a typed name filter as sent to the service: short, no NUL, trimmed."""
    return str(value or "")[:MAX_FILTER].replace("\x00", "").strip()


def catalog_rows(context: Context, catalog: list[dict]) -> list[list]:
    """Return the table rows of a metric catalog, each name linking to a board panel of it."""
    rows = []
    for item in catalog:
        name = str(item.get("name", ""))
        unit = unit_of(name)
        shown = "PSI (histogram)" if name.endswith("_bucket") else unit.label
        board = context.path("/board") + "?" + urlencode({"panel": name})
        rows.append(
            [
                dcc.Link(name, href=board, title=f"draw {name} on the board"),
                f"{shown} (rate)" if unit.rate else shown,
                f"{int(item.get('series', 0)):,}",
                ", ".join(item.get("labels") or []),
            ]
        )
    return rows


def _listing(context: Context, contains: str | None) -> list:
    try:
        doc = context.client.metric_catalog(limit=LIMIT, contains=contains)
    except ApiError as exc:
        return [error_box(f"The metric list is not available: {exc.message}")]
    data = doc.get("data") or []
    if not data:
        what = f" holding {contains!r}" if contains else ""
        return [html.P(f"No stored metric names{what}.", className="empty")]
    more = f" (the first {LIMIT}; narrow with the filter)" if doc.get("warnings") else ""
    return [
        html.P(f"{len(data):,} metrics{more}", id=ids.METRICS_COUNT, className="status"),
        table(
            ["metric", "unit", "series", "labels"],
            catalog_rows(context, data),
            id_="metrics-catalog",
        ),
    ]


def layout(context: Context, **query) -> html.Div:
    """Return the metric browser, filtered by the URL's ``q``."""
    contains = filter_text(urlquery.one(query, "q"))
    return html.Div(
        [
            html.H2("Metric browser"),
            html.P(
                "Stored metric names with their series and label names; the unit is read "
                "from the name. Open one on the board as a panel of its own.",
                className="small",
            ),
            html.Label(
                [
                    "Filter",
                    dcc.Input(
                        id=ids.METRICS_FILTER,
                        type="text",
                        value=contains,
                        debounce=0.3,
                        placeholder="part of a metric name",
                    ),
                ],
                className="control",
            ),
            html.Div(_listing(context, contains or None), id=ids.METRICS_TABLE),
        ]
    )


def register(app: dash.Dash, context: Context) -> None:
    """Add the metric browser page and its filter."""
    dash.register_page(
        "metrics-browser",
        path="/metrics-browser",
        name="Metrics",
        title="causeline · metrics",
        layout=lambda **q: layout(serving(context), **q),
    )

    @app.callback(
        Output(ids.METRICS_TABLE, "children"),
        Input(ids.METRICS_FILTER, "value"),
        prevent_initial_call=True,
    )
    def refilter(value):
        return _listing(context, filter_text(value) or None)
