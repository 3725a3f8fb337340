"""On call now, the rotations and overrides, and forms to add a rotation and to cover a shift."""

from __future__ import annotations

import time
from typing import Any

import dash
from dash import Input, Output, State, dcc, html, no_update

from dashboard import ids, urlquery
from dashboard.client import ApiError
from dashboard.context import Context, serving
from dashboard.rotationform import FIELDS as ROTATION_FIELDS
from dashboard.rotationform import rotation_body
from dashboard.tables import error_box, table, write_button
from dashboard.timeparse import fmt, parse_when

TEAMS = ("algo", "infra")
FIELDS = ("team", "model", "person", "contact", "start", "end", "reason")


# Models with rotations or overrides of their own listed in "On call now", the first by name
# (one API call each); ?model=NAME shows any model.
MAX_MODELS_NOW = 20


def _now_rows(context: Context, models: list[str]) -> list[list]:
    """Return who is on call now for each team, per model ("" is every model)."""
    rows = []
    for model in models:
        who = context.client.on_call(model or None)
        for team in TEAMS:
            p = who.get(team) or {}
            source = p.get("source", "")
            if source == "rotation":
                source = f"rotation {p.get('rotation', '')}"
            rows.append(
                [
                    model or "every model",
                    team,
                    p.get("person", "nobody"),
                    p.get("contact", ""),
                    source,
                    fmt(p.get("until")),
                ]
            )
    return rows


def _models_on_call(rotations: list[dict], overrides: list[dict]) -> list[str]:
    """Return "" (every model) and the models that have a rotation or override of their own."""
    named = {str(x["model"]) for x in [*rotations, *overrides] if x.get("model")}
    return ["", *sorted(named)[:MAX_MODELS_NOW]]


def _rotation_row(r: dict) -> list:
    members = ", ".join(m.get("name", "") if isinstance(m, dict) else str(m) for m in r["members"])
    return [
        r.get("name"),
        r.get("team"),
        r.get("model") or "every model",
        members,
        fmt(r.get("start")),
        f"{r.get('period_days', 7):g} d",
    ]


def _override_row(o: dict) -> list:
    return [
        o.get("team"),
        o.get("model") or "every model",
        o.get("person"),
        o.get("contact", ""),
        fmt(o.get("start")),
        fmt(o.get("end")),
        o.get("reason", ""),
    ]


def _listing(context: Context, model: str) -> list:
    try:
        rotations = context.client.rotations()
        overrides = context.client.overrides()
        recent = [o for o in overrides if (o.get("end") or 0) >= time.time() - 7 * 86400]
        models = [model] if model else _models_on_call(rotations, recent)
        now_rows = _now_rows(context, models)
    except ApiError as exc:
        return [error_box(f"On-call data not available: {exc.message}")]
    headers = ["model", "team", "person", "contact", "via", "until"]
    return [
        html.H3(f"On call now{f' for {model}' if model else ''}"),
        table(headers, now_rows, id_="oncall-now"),
        html.H3("Rotations"),
        table(
            ["name", "team", "model", "members (in turn)", "from", "period"],
            [_rotation_row(r) for r in rotations],
            id_="oncall-rotations",
        )
        if rotations
        else html.P("No rotation yet: add one below.", className="empty"),
        html.H3("Overrides (the last 7 days and ahead)"),
        table(
            ["team", "model", "person", "contact", "from", "until", "reason"],
            [_override_row(o) for o in sorted(recent, key=lambda o: o["start"], reverse=True)],
            id_="oncall-overrides",
        ),
    ]


def _text(id_: str, **props: Any) -> dcc.Input:
    """Return a text input that reports every change (no debounce)."""
    return dcc.Input(id=id_, type="text", debounce=False, **props)


def _field(name: str, label: str, control) -> html.Label:
    return html.Label([label, control], className="form-field", id=f"oncall-field-{name}")


def _rotation_form(model: str, can_write: bool) -> list:
    fields = [
        ("name", "name *", _text(ids.ONCALL_ROT_NAME, placeholder="ranker infra")),
        ("team", "team *", dcc.Dropdown(id=ids.ONCALL_ROT_TEAM, options=list(TEAMS))),
        (
            "model",
            "model (blank: every model)",
            _text(ids.ONCALL_ROT_MODEL, value=model),
        ),
        (
            "members",
            "members in turn * (name <contact>, ...)",
            _text(ids.ONCALL_ROT_MEMBERS, placeholder="li.wei <@li.wei>, chen.yu"),
        ),
        (
            "start",
            "first turn starts (blank: now)",
            _text(ids.ONCALL_ROT_START, placeholder="now or now-2d"),
        ),
        ("period_days", "days per turn", _text(ids.ONCALL_ROT_PERIOD, value="7")),
    ]
    return [
        html.H3("Add a rotation"),
        html.P(
            "Each member holds the team's shift for one period, in the order given, "
            "from the start on.",
            className="small",
        ),
        html.Div([_field(f"rot-{n}", label, c) for n, label, c in fields], className="form"),
        write_button("Add rotation", ids.ONCALL_ROT_SUBMIT, can_write),
        html.Span(id=ids.ONCALL_ROT_MSG, className="msg"),
    ]


def layout(context: Context, **query) -> html.Div:
    """Return the on-call page, for the URL's ``model`` (every model when absent)."""
    model = (urlquery.one(query, "model") or "")[:200]
    access = context.access()
    form = [
        _field("team", "team *", dcc.Dropdown(id=ids.ONCALL_TEAM, options=list(TEAMS))),
        _field("model", "model (blank: every model)", _text(ids.ONCALL_MODEL)),
        _field("person", "person *", _text(ids.ONCALL_PERSON)),
        _field("contact", "contact", _text(ids.ONCALL_CONTACT)),
        _field("start", "from (blank: now)", _text(ids.ONCALL_START)),
        _field("end", "until * (e.g. now+8h)", _text(ids.ONCALL_END)),
        _field("reason", "reason", _text(ids.ONCALL_REASON)),
    ]
    return html.Div(
        [
            html.H2("On call"),
            html.Div(_listing(context, model), id=ids.ONCALL_LISTING),
            html.H3("Cover a shift"),
            html.P(
                "An override puts a person on call in place of the rotation until the time given.",
                className="small",
            ),
            html.Div(form, className="form"),
            write_button("Add override", ids.ONCALL_SUBMIT, access.can_write),
            html.Span(id=ids.ONCALL_MSG, className="msg"),
            *_rotation_form(model, access.can_write),
            dcc.Store(id=ids.ONCALL_VIEW, data=model),
        ]
    )


def override_body(values: dict, now: float) -> tuple[dict, dict[str, str]]:
    """Return the override to post from the form's values, and the errors by field."""
    errors: dict[str, str] = {}
    body = {k: (values.get(k) or "").strip() for k in FIELDS}
    if body["team"] not in TEAMS:
        errors["team"] = "pick algo or infra"
    if not body["person"]:
        errors["person"] = "who covers the shift"
    start = parse_when(body["start"]) if body["start"] else now
    end = parse_when(body["end"])
    if start is None:
        errors["start"] = "a time such as now, now+1h, ISO 8601 or unix seconds"
    if end is None:
        errors["end"] = "a time such as now+8h, ISO 8601 or unix seconds"
    elif start is not None and end <= start:
        errors["end"] = "must be after the start"
    body["start"], body["end"] = start, end
    return body, errors


def register(app: dash.Dash, context: Context) -> None:
    """Add the on-call page and its callbacks."""
    dash.register_page(
        "oncall",
        path="/oncall",
        name="On call",
        title="causeline · on call",
        layout=lambda **q: layout(serving(context), **q),
    )

    @app.callback(
        Output(ids.ONCALL_MSG, "children"),
        Output(ids.ONCALL_LISTING, "children"),
        Input(ids.ONCALL_SUBMIT, "n_clicks"),
        State(ids.ONCALL_TEAM, "value"),
        State(ids.ONCALL_MODEL, "value"),
        State(ids.ONCALL_PERSON, "value"),
        State(ids.ONCALL_CONTACT, "value"),
        State(ids.ONCALL_START, "value"),
        State(ids.ONCALL_END, "value"),
        State(ids.ONCALL_REASON, "value"),
        State(ids.ONCALL_VIEW, "data"),
        prevent_initial_call=True,
    )
    def add(_clicks, *args):
        *values, view = args
        built = override_body(dict(zip(FIELDS, values, strict=True)), time.time())
        return _submit(context, "overrides", built, view, _said_override)

    @app.callback(
        Output(ids.ONCALL_ROT_MSG, "children"),
        Output(ids.ONCALL_LISTING, "children", allow_duplicate=True),
        Input(ids.ONCALL_ROT_SUBMIT, "n_clicks"),
        State(ids.ONCALL_ROT_NAME, "value"),
        State(ids.ONCALL_ROT_TEAM, "value"),
        State(ids.ONCALL_ROT_MODEL, "value"),
        State(ids.ONCALL_ROT_MEMBERS, "value"),
        State(ids.ONCALL_ROT_START, "value"),
        State(ids.ONCALL_ROT_PERIOD, "value"),
        State(ids.ONCALL_VIEW, "data"),
        prevent_initial_call=True,
    )
    def add_rotation(_clicks, *args):
        *values, view = args
        built = rotation_body(dict(zip(ROTATION_FIELDS, values, strict=True)), time.time())
        return _submit(context, "rotations", built, view, _said_rotation)


def _said_override(body: dict) -> str:
    return f"{body['person']} is on call for {body['team']} until {fmt(body['end'])}."


def _said_rotation(body: dict) -> str:
    first = body["members"][0]["name"]
    return (
        f"Rotation {body['name']} added: {first} holds {body['team']} first, "
        f"{body['period_days']:g} d a turn from {fmt(body['start'])}."
    )


def _submit(context: Context, kind: str, built: tuple, view, said) -> tuple:
    """Post a form's body as the signed-in person; return what to say and the new listing."""
    access = context.access()
    if not access.can_write:
        return f"Read-only: {access.read_only_reason}", no_update
    body, errors = built
    if errors:
        return "Please fix: " + "; ".join(f"{k}: {v}" for k, v in errors.items()), no_update
    try:
        context.client.add_on_call(kind, body, author=access.user)
    except ApiError as exc:
        return exc.explained(), no_update
    return said(body), _listing(context, view or "")
