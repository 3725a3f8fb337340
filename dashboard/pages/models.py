"""Models: the registry, model cards, SLAs and an environment diff of two fingerprints."""

from __future__ import annotations

import json

import dash
from dash import Input, Output, dcc, html

from dashboard import ids, urlquery
from dashboard.client import ApiError
from dashboard.context import Context, serving
from dashboard.envdiff import diff_view, env_diff
from dashboard.panels import model_scope
from dashboard.selectors import selector
from dashboard.tables import error_box, table
from dashboard.timeparse import fmt

MAX_INSTANCES = 1000


def model_instances(context: Context, topology: dict, model: str) -> list[str]:
    """Return a model's instances as the board finds them: the topology's, else its series'."""
    if not model:
        return []
    found, _hosts = model_scope(topology, model)
    if found:
        return found
    try:
        match = selector(None, {"model": [model]})
        return context.client.label_values("instance", match=match, limit=MAX_INSTANCES)
    except ApiError:
        return []


def _topology(context: Context) -> dict:
    try:
        return context.client.topology()
    except ApiError:
        return {}


def _fingerprint_options(context: Context) -> list[dict]:
    try:
        prints = context.client.fingerprints()
    except ApiError:
        return []
    return [
        {
            "label": f"{p['host']} {p.get('instance') or ''} {p.get('model') or ''} {fmt(p['ts'])}",
            "value": p["id"],
        }
        for p in prints
    ]


def layout(context: Context, **query) -> html.Div:
    """Return the models page."""
    note: html.Div | None = None
    try:
        models = context.client.models()
    except ApiError as exc:
        models, note = [], error_box(f"Model registry not available: {exc.message}")
    topology = _topology(context) if models else {}
    rows = []
    for m in models:
        found = model_instances(context, topology, m.get("name") or "")
        count = len(found) or m.get("instances") or 0
        rows.append(
            [
                m.get("name"),
                m.get("owner", ""),
                m.get("description", ""),
                ", ".join(m.get("versions", [])),
                html.Span(str(count), title=", ".join(found)),
            ]
        )
    names = [m.get("name") for m in models]
    prints = _fingerprint_options(context)
    return html.Div(
        [
            html.H2("Models"),
            note
            or table(
                ["model", "owner", "description", "versions", "instances"], rows, id_="models-table"
            ),
            html.Label(
                [
                    "Model",
                    dcc.Dropdown(
                        id=ids.MODELS_PICK,
                        options=names,
                        value=urlquery.one(query, "model") or (names[0] if names else None),
                    ),
                ],
                className="control",
            ),
            html.Div(id=ids.MODELS_DETAIL),
            html.H3("Environment diff"),
            html.P(
                "Pick two fingerprints (driver, CUDA, libraries, config) to compare.",
                className="small",
            ),
            html.Div(
                [
                    dcc.Dropdown(
                        id=ids.ENV_LEFT,
                        options=prints,
                        value=prints[1]["value"] if len(prints) > 1 else None,
                    ),
                    dcc.Dropdown(
                        id=ids.ENV_RIGHT,
                        options=prints,
                        value=prints[0]["value"] if prints else None,
                    ),
                ],
                className="pair",
            ),
            dcc.Checklist(
                id=ids.ENV_ALL,
                options=[{"label": " show the keys that agree too", "value": "all"}],
                value=[],
            ),
            html.Div(id=ids.ENV_DIFF),
        ]
    )


def _card(context: Context, model: str, version: dict) -> html.Details:
    try:
        card = context.client.model_card(model, version["version"])
        text = json.dumps(card.get("card", card), indent=2)
    except ApiError as exc:
        text = exc.message
    return html.Details([html.Summary(f"card of {version['version']}"), html.Pre(text)])


def register(app: dash.Dash, context: Context) -> None:
    """Add the models page and its callbacks."""
    dash.register_page(
        "models",
        path="/models",
        name="Models",
        title="causeline · models",
        layout=lambda **q: layout(serving(context), **q),
    )

    @app.callback(Output(ids.MODELS_DETAIL, "children"), Input(ids.MODELS_PICK, "value"))
    def detail(model):
        if not model:
            return html.P("No models registered yet.", className="empty")
        try:
            info = context.client.model(model)
        except ApiError as exc:
            return error_box(exc.message)
        if not isinstance(info, dict):
            return error_box(f"no model {model}")
        versions = info.get("versions", [])
        rows = [
            [
                v.get("version"),
                "yes" if v.get("has_card") else "no",
                fmt(v.get("card_updated_at")),
                v.get("card_author") or "",
            ]
            for v in versions
        ]
        slas = [
            [
                s.get("name"),
                f"{s.get('aggregate')} {s.get('metric')} {s.get('op')} "
                f"{s.get('threshold')} for {s.get('for_seconds')} s",
                s.get("severity", ""),
                dcc.Markdown(s.get("description") or ""),
            ]
            for s in info.get("slas", [])
        ]
        oncall = info.get("oncall") or {}
        found = model_instances(context, _topology(context), model)
        return html.Div(
            [
                html.H3(f"{model} · owner {info.get('owner', '')}"),
                html.P(info.get("description", "")),
                html.P(f"Instances ({len(found)}): {', '.join(found) or 'none found'}"),
                html.P(
                    "On call: "
                    + " · ".join(
                        f"{t}: {(p or {}).get('person', 'nobody')}"
                        for t, p in sorted(oncall.items())
                    )
                ),
                table(["version", "card", "card updated", "card author"], rows),
                *[_card(context, model, v) for v in versions if v.get("has_card")],
                html.H4("SLAs"),
                table(["name", "objective", "severity", "document"], slas),
            ]
        )

    @app.callback(
        Output(ids.ENV_DIFF, "children"),
        Input(ids.ENV_LEFT, "value"),
        Input(ids.ENV_RIGHT, "value"),
        Input(ids.ENV_ALL, "value"),
    )
    def diff(left_id, right_id, show_all):
        if left_id is None or right_id is None:
            return html.P("No fingerprints stored yet (the agent sends them).", className="empty")
        try:
            prints = {p["id"]: p for p in context.client.fingerprints()}
        except ApiError as exc:
            return error_box(exc.message)
        left, right = prints.get(left_id, {}), prints.get(right_id, {})
        rows = env_diff(left.get("fingerprint", {}), right.get("fingerprint", {}))
        names = (left.get("host", "left"), right.get("host", "right"))
        return diff_view(rows, names, show_all="all" in (show_all or []))
