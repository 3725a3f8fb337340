"""The capacity planner: inputs, the arithmetic and the result (made on load, then on Plan)."""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, html

from dashboard import ids, urlquery
from dashboard.client import ApiError
from dashboard.context import Context, serving
from dashboard.tables import error_box

INPUTS = (
    ("sla_latency_ms", "SLA latency (ms)", 30),
    ("latency_per_request_ms", "latency per request (ms; blank: measured p50)", 12),
    ("qps_per_replica", "QPS per replica (blank: measured)", 40),
    ("peak_qps", "peak QPS", 400),
    ("redundancy", "redundancy (fraction)", 0.2),
    ("gpu", "GPU", "T4"),
    ("model", "model (for measured figures)", ""),
)


def initial_values(query: dict, models: list[str]) -> dict:
    """Return the form's first values: for the URL's model, else the first registered one.

    With a model, its measured QPS per replica and p50 latency stand in for the examples.
    """
    values = {name: default for name, _label, default in INPUTS}
    model = urlquery.one(query, "model") or (models[0] if models else "")
    if model:
        values |= {"model": model, "latency_per_request_ms": "", "qps_per_replica": ""}
    return values


def _models(context: Context) -> list[str]:
    try:
        return [m["name"] for m in context.client.get("/api/v1/models") if m.get("name")]
    except ApiError:
        return []


def layout(context: Context, **query) -> html.Div:
    """Return the planner page with the plan of its first values already made."""
    values = initial_values(query, _models(context))
    return html.Div(
        [
            html.H2("Capacity planner"),
            html.Div(
                [
                    html.Label(
                        [
                            label,
                            dcc.Input(
                                id=ids.field(ids.CAPACITY_FIELD, name),
                                value=values[name],
                                type="text",
                            ),
                        ],
                        className="form-field",
                    )
                    for name, label, _default in INPUTS
                ],
                className="form-grid",
            ),
            html.Button("Plan", id=ids.CAPACITY_RUN, n_clicks=0),
            html.Div(plan_view(context, values), id=ids.CAPACITY_RESULT),
        ]
    )


def plan_body(values: dict) -> tuple[dict, dict[str, str]]:
    """Return the plan request body and errors by field."""
    body, errors = {}, {}
    for name, _label, _default in INPUTS:
        raw = values.get(name)
        if raw in (None, ""):
            continue
        if name in ("gpu", "model"):
            body[name] = str(raw).strip()
            continue
        try:
            body[name] = float(raw)
        except (TypeError, ValueError):
            errors[name] = "must be a number"
    return body, errors


def register(app: dash.Dash, context: Context) -> None:
    """Add the capacity page and its callback."""
    dash.register_page(
        "capacity",
        path="/capacity",
        name="Capacity",
        title="causeline · capacity",
        layout=lambda **q: layout(serving(context), **q),
    )

    @app.callback(
        Output(ids.CAPACITY_RESULT, "children"),
        Input(ids.CAPACITY_RUN, "n_clicks"),
        *[State(ids.field(ids.CAPACITY_FIELD, name), "value") for name, _l, _d in INPUTS],
        prevent_initial_call=True,
    )
    def plan(_clicks, *values):
        return plan_view(context, dict(zip([n for n, _l, _d in INPUTS], values, strict=True)))


def plan_view(context: Context, values: dict):
    """Return the plan of the form's values, or what is wrong with them."""
    body, errors = plan_body(values)
    if errors:
        return error_box("; ".join(f"{k}: {v}" for k, v in errors.items()))
    try:
        result = context.client.post("/api/v1/capacity/plan", body)
    except ApiError as exc:
        return error_box(exc.message)
    verdict = "fits the SLA" if result.get("fits_sla") else "does NOT fit the SLA"
    return html.Div(
        [
            html.H3(
                f"{result.get('replicas_with_redundancy')} replicas "
                f"({result.get('replicas')} before redundancy) · {verdict}"
            ),
            html.P(
                f"QPS per replica: {_qps(result.get('qps_per_replica'))} "
                f"({result.get('qps_source', 'given')})"
            ),
            html.Ol([html.Li(step) for step in result.get("steps", [])], id="capacity-steps"),
        ]
    )


def _qps(value) -> str:
    """Return a QPS figure as a person reads it: 243, 40, 2.5, 12,400."""
    if not isinstance(value, int | float):
        return str(value)
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
