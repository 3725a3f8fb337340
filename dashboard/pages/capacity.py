"""The capacity planner: inputs, the arithmetic and the result (made on load, then on Plan)."""

from __future__ import annotations

import math
import re
import time

import dash
from dash import Input, Output, State, dcc, html

from dashboard import ids, urlquery
from dashboard.client import ApiError
from dashboard.context import Context, serving
from dashboard.selectors import exact
from dashboard.tables import error_box

INPUTS = (
    ("sla_latency_ms", "SLA latency (ms)", 30),
    ("latency_metric", "latency percentile measured (the SLA's)", "model_latency_p50_ms"),
    ("latency_per_request_ms", "latency per request (ms; blank: measured)", 12),
    ("qps_per_replica", "QPS per replica (blank: measured)", 40),
    ("peak_qps", "peak QPS", 400),
    ("redundancy", "redundancy (fraction)", 0.2),
    ("gpu", "GPU", "T4"),
    ("model", "model (for measured figures)", ""),
)
TEXT_FIELDS = ("gpu", "model", "latency_metric")
LATENCY_SLA = re.compile(r"model_latency_p\d{1,3}_ms")
PEAK_WINDOW_S = 86_400.0  # the peak QPS the form starts from: the last day's


def initial_values(query: dict, models: list[str], measured: dict | None = None) -> dict:
    """Return the form's first values: for the URL's model, else the first registered one.

    With a model, its measured QPS per replica and latency stand in for the examples, and
    ``measured`` (``model_defaults``: its SLA, peak QPS and GPU) for the rest.
    """
    values = {name: default for name, _label, default in INPUTS}
    model = urlquery.one(query, "model") or (models[0] if models else "")
    if model:
        values |= {"model": model, "latency_per_request_ms": "", "qps_per_replica": ""}
        values |= {k: v for k, v in (measured or {}).items() if k in values}
    return values


def peak_total(found: list) -> float | None:
    """Return the highest per-minute sum over a model's instances of their QPS series."""
    totals: dict[int, float] = {}
    for series in found:
        minutes: dict[int, list[float]] = {}
        for t, v in zip(series.ts, series.values, strict=True):
            if math.isfinite(v):
                minutes.setdefault(int(t // 60), []).append(float(v))
        for minute, vals in minutes.items():
            totals[minute] = totals.get(minute, 0.0) + sum(vals) / len(vals)
    return max(totals.values()) if totals else None


def model_defaults(context: Context, model: str) -> dict:
    """Return the plan's figures from a model's own data: its SLA, peak QPS, GPU, replicas."""
    out: dict = {}
    try:
        slas = context.client.slas()
    except ApiError:
        slas = []
    for sla in slas:
        if (
            (sla.get("labels") or {}).get("model") == model
            and LATENCY_SLA.fullmatch(str(sla.get("metric") or ""))
            and sla.get("op") == ">"
            and sla.get("threshold")
        ):
            out |= {"sla_latency_ms": sla["threshold"], "latency_metric": sla["metric"]}
            break
    end = time.time()
    selector = exact("model_requests_per_second", {"model": model})
    try:
        found = context.client.query_range([selector], end - PEAK_WINDOW_S, end)
    except ApiError:
        found = []
    peak = peak_total(found)
    if peak:
        out |= {"peak_qps": round(peak, 1), "replicas_now": len(found)}
    try:
        prints = context.client.fingerprints()
    except ApiError:
        prints = []
    for fp in prints:  # newest first
        devices = ((fp.get("fingerprint") or {}).get("gpu") or {}).get("devices") or []
        if fp.get("model") == model and devices:
            out["gpu"] = str(devices[0].get("name") or "")
            break
    return out


def _models(context: Context) -> list[str]:
    try:
        return [m["name"] for m in context.client.models() if m.get("name")]
    except ApiError:
        return []


def layout(context: Context, **query) -> html.Div:
    """Return the planner page with the plan of its first values already made."""
    models = _models(context)
    model = urlquery.one(query, "model") or (models[0] if models else "")
    measured = model_defaults(context, model) if model else {}
    values = initial_values(query, models, measured)
    running = measured.get("replicas_now")
    return html.Div(
        [
            html.H2("Capacity planner"),
            html.P(
                f"{model}: figures from its own data (its SLA, the last day's peak QPS, its "
                f"GPU); {running} replicas report now."
                if running
                else "Figures for a model come from its own data when it has some.",
                id=ids.CAPACITY_SOURCE,
                className="small",
            ),
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
    body: dict[str, str | float] = {}
    errors: dict[str, str] = {}
    for name, _label, _default in INPUTS:
        raw = values.get(name)
        if raw in (None, ""):
            continue
        if name in TEXT_FIELDS:
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
        result = context.client.capacity_plan(body)
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
