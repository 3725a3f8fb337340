"""SLAs: every objective with its written document, and a form to change one."""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, html, no_update

from dashboard import ids, urlquery
from dashboard.client import ApiError
from dashboard.context import Context, serving
from dashboard.tables import error_box, table, write_button

SEVERITIES = ("critical", "major", "minor", "info")
OPERATORS = {">": "above the threshold (>)", "<": "below the threshold (<)"}
MAX_DOCUMENT = 100_000  # characters, as the service's bound


def objective(sla: dict) -> str:
    """Return an SLA's objective in words: 'max latency_p99_ms{model=m} > 50 for 120 s'."""
    labels = ",".join(f"{k}={v}" for k, v in sorted((sla.get("labels") or {}).items()))
    what = f"{sla.get('aggregate', 'max')} {sla.get('metric', '')}{{{labels}}}"
    if sla.get("op") and sla.get("threshold") is not None:
        return f"{what} {sla['op']} {sla['threshold']:g} for {sla.get('for_seconds') or 0:g} s"
    return f"{what}: breaches declared by an outside alert"


def _listing(context: Context) -> tuple[list, list[str]]:
    try:
        slas = context.client.slas()
    except ApiError as exc:
        return [error_box(f"SLAs not available: {exc.message}")], []
    rows = [
        [s.get("name"), objective(s), s.get("severity") or "—", s.get("model") or "—"] for s in slas
    ]
    docs = [
        html.Details(
            [html.Summary(f"document of {s.get('name')}"), dcc.Markdown(s["description"])],
            className="sla-doc",
        )
        for s in slas
        if s.get("description")
    ]
    listing = [table(["name", "objective", "severity", "model"], rows, id_="slas-table"), *docs]
    return listing, [str(s.get("name")) for s in slas]


def layout(context: Context, **query) -> html.Div:
    """Return the SLA page; the URL's ``sla`` is the one picked for editing."""
    listing, names = _listing(context)
    picked = urlquery.one(query, "sla")
    access = context.access()
    unknown = []
    if picked not in (None, "") and picked not in names:
        unknown = [
            html.Div(
                f"No SLA named {str(picked)[:80]!r}; pick one below"
                + (f" (first: {names[0]!r})" if names else " (none is stored yet)"),
                id=ids.SLAS_UNKNOWN,
                className="error",
            )
        ]
    return html.Div(
        [
            html.H2("SLAs"),
            *unknown,
            html.P(
                "The objectives the evaluator checks, and the document each one is written in. "
                "From a terminal: causeline sla add|list|show|delete.",
                className="small",
            ),
            html.Div(listing, id=ids.SLAS_LISTING),
            html.H3("Change an SLA"),
            dcc.Dropdown(
                id=ids.SLAS_PICK,
                options=names,
                value=picked if picked in names else (names[0] if names else None),
            ),
            html.Div(
                [
                    html.Label(
                        [
                            "breached when the value is",
                            dcc.Dropdown(
                                id=ids.SLAS_OP,
                                options=[{"label": v, "value": k} for k, v in OPERATORS.items()],
                                clearable=False,
                            ),
                        ]
                    ),
                    html.Label(["threshold", dcc.Input(id=ids.SLAS_THRESHOLD, type="number")]),
                    html.Label(["for (seconds)", dcc.Input(id=ids.SLAS_FOR, type="number")]),
                    html.Label(
                        ["severity", dcc.Dropdown(id=ids.SLAS_SEVERITY, options=list(SEVERITIES))]
                    ),
                    html.Label(
                        [
                            "document (Markdown: objective, runbook link, contacts)",
                            dcc.Textarea(
                                id=ids.SLAS_DOC, maxLength=MAX_DOCUMENT, style={"width": "100%"}
                            ),
                        ]
                    ),
                ],
                className="form",
            ),
            write_button("Save SLA", ids.SLAS_SAVE, access.can_write),
            html.Span(id=ids.SLAS_MSG, className="msg"),
        ]
    )


def edited(sla: dict, threshold, for_seconds, severity, document, op=None) -> dict:
    """Return the SLA to PUT: the stored one with the form's values, unknown fields left out."""
    keep = ("metric", "labels", "aggregate", "op", "breach_start", "model")
    body = {k: sla[k] for k in keep if sla.get(k) is not None}
    if op:
        body["op"] = op
    body["threshold"] = threshold if threshold is not None else sla.get("threshold")
    body["for_seconds"] = for_seconds if for_seconds is not None else sla.get("for_seconds", 0)
    body["severity"] = severity or sla.get("severity", "major")
    body["description"] = document if document is not None else sla.get("description", "")
    if body["threshold"] is None:
        body.pop("threshold")
    return body


def register(app: dash.Dash, context: Context) -> None:
    """Add the SLA page and its callbacks."""
    dash.register_page(
        "slas",
        path="/slas",
        name="SLAs",
        title="causeline · SLAs",
        layout=lambda **q: layout(serving(context), **q),
    )

    @app.callback(
        Output(ids.SLAS_OP, "value"),
        Output(ids.SLAS_THRESHOLD, "value"),
        Output(ids.SLAS_FOR, "value"),
        Output(ids.SLAS_SEVERITY, "value"),
        Output(ids.SLAS_DOC, "value"),
        Input(ids.SLAS_PICK, "value"),
    )
    def fill(name):
        if not name:
            return None, None, None, None, ""
        try:
            sla = context.client.sla(name)
        except ApiError:
            return None, None, None, None, ""
        return (
            sla.get("op"),
            sla.get("threshold"),
            sla.get("for_seconds"),
            sla.get("severity"),
            sla.get("description", ""),
        )

    @app.callback(
        Output(ids.SLAS_MSG, "children"),
        Output(ids.SLAS_LISTING, "children"),
        Input(ids.SLAS_SAVE, "n_clicks"),
        State(ids.SLAS_PICK, "value"),
        State(ids.SLAS_THRESHOLD, "value"),
        State(ids.SLAS_FOR, "value"),
        State(ids.SLAS_SEVERITY, "value"),
        State(ids.SLAS_DOC, "value"),
        State(ids.SLAS_OP, "value"),
        prevent_initial_call=True,
    )
    def save(_clicks, name, threshold, for_seconds, severity, document, op):
        access = context.access()
        if not access.can_write:
            return f"Read-only: {access.read_only_reason}", no_update
        if not name:
            return "Pick an SLA first.", no_update
        try:
            stored = context.client.sla(name)
            body = edited(stored, threshold, for_seconds, severity, document, op)
            context.client.save_sla(name, body, author=access.user)
        except ApiError as exc:
            return exc.explained(), no_update
        return f"Saved {name} as {access.user}.", _listing(context)[0]
