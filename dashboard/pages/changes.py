"""The change calendar: a timeline, a filtered list and forms to register and edit changes."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import dash
from dash import ALL, Input, Output, State, dcc, html, no_update

from dashboard import ids
from dashboard.changeform import FIELDS, KINDS, OWNERS, STAGES, change_body
from dashboard.client import ApiError
from dashboard.context import Context, serving
from dashboard.figures.calendar import calendar_figure, when
from dashboard.tables import error_box, table, write_button
from dashboard.timeparse import fmt

FIELD_HELP = {
    "kind": "kind *",
    "owner": "owning team *",
    "target": "target (model:NAME, host:NAME)",
    "summary": "summary",
    "labels": "labels (model=x, instance=i-3)",
    "scope": "scope",
    "planned_ts": "planned for",
    "ts": "happened at, blank if planned",
    "rollout_stage": "rollout stage",
    "canary_percent": "canary %",
    "version": "version",
    "person": "person who makes it",
}
CHOICES = {"kind": KINDS, "owner": OWNERS, "rollout_stage": STAGES}


def time_examples(now: float) -> dict[str, str]:
    """Return the example each time field shows: relative to now, and the time it means."""
    ahead = (now // 3600 + 2) * 3600  # two whole hours ahead
    stamp = datetime.fromtimestamp(ahead, UTC).strftime("%Y-%m-%dT%H:%MZ")
    return {"planned_ts": f"now+2h or {stamp}", "ts": "now-10m or now"}


def _input(name: str, examples: dict[str, str]) -> html.Label:
    fid = {"type": ids.CHANGE_FORM, "field": name}
    control: dcc.Dropdown | dcc.Input
    if name in CHOICES:
        control = dcc.Dropdown(id=fid, options=list(CHOICES[name]), placeholder=name)
    else:
        hint = examples.get(name, name)
        control = dcc.Input(id=fid, type="text", debounce=False, placeholder=hint)
    label = FIELD_HELP[name] + (f" (e.g. {examples[name]})" if name in examples else "")
    return html.Label(
        [
            label,
            control,
            html.Span(id={"type": "change-error", "field": name}, className="field-error"),
        ],
        className="form-field",
    )


def layout(context: Context, **_query) -> html.Div:
    """Return the calendar page."""
    access = context.access()
    return html.Div(
        [
            html.H2("Change calendar"),
            html.Div(
                [
                    html.Label(
                        [
                            "Kind",
                            dcc.Dropdown(id=ids.CHANGES_KIND, options=list(KINDS), multi=True),
                        ],
                        className="control",
                    ),
                    html.Label(
                        [
                            "Owner",
                            dcc.Dropdown(id=ids.CHANGES_OWNER, options=list(OWNERS), multi=True),
                        ],
                        className="control",
                    ),
                    html.Label(
                        [
                            "Window",
                            dcc.RadioItems(
                                id=ids.CHANGES_DAYS,
                                inline=True,
                                value=7,
                                options=[
                                    {"label": f"last {d} d", "value": d} for d in (1, 7, 30, 90)
                                ],
                            ),
                        ],
                        className="control",
                    ),
                ],
                className="controls",
            ),
            dcc.Store(id=ids.CHANGES_RELOAD, data=0),
            dcc.Graph(id=ids.CHANGES_TIMELINE, config={"displaylogo": False}),
            html.Div(id=ids.CHANGES_LIST),
            html.H3("Register a change (ahead of time, or after the fact)"),
            html.Div(
                [_input(name, time_examples(time.time())) for name in FIELDS],
                className="form-grid",
            ),
            html.Div(
                [
                    write_button("Register change", ids.CHANGE_SUBMIT, access.can_write),
                    dcc.Input(id=ids.CHANGE_EDIT_ID, placeholder="change id to edit", type="text"),
                    write_button(
                        "Update that change (filled fields only)",
                        ids.CHANGE_UPDATE,
                        access.can_write,
                    ),
                ],
                className="actions",
            ),
            html.Div(id=ids.CHANGE_MSG, className="msg"),
        ]
    )


def change_listing(changes: list[dict]) -> html.Table:
    """Return the list of changes, newest first, every column named."""
    rows = [
        [
            c.get("id"),
            fmt(when(c)),
            c.get("status", "done" if c.get("ts") else "planned"),
            c.get("kind"),
            c.get("owner"),
            c.get("target", ""),
            c.get("summary", ""),
            c.get("person") or c.get("author") or "",
            "unplanned" if c.get("unplanned") else "",
        ]
        for c in sorted(changes, key=lambda c: when(c) or 0, reverse=True)
    ]
    headers = ["id", "when", "status", "kind", "owner", "target", "summary", "who", "flag"]
    return table(headers, rows, id_="changes-table")


def register(app: dash.Dash, context: Context) -> None:
    """Add the change calendar page and its callbacks."""
    dash.register_page(
        "changes",
        path="/changes",
        name="Change calendar",
        title="causeline · changes",
        layout=lambda **q: layout(serving(context), **q),
    )

    @app.callback(
        Output(ids.CHANGES_TIMELINE, "figure"),
        Output(ids.CHANGES_LIST, "children"),
        Input(ids.CHANGES_KIND, "value"),
        Input(ids.CHANGES_OWNER, "value"),
        Input(ids.CHANGES_DAYS, "value"),
        Input(ids.CHANGES_RELOAD, "data"),
    )
    def show(kinds, owners, days, _reload):
        now = time.time()
        window = (now - (days or 7) * 86400, now + 2 * 86400)
        try:
            changes = context.client.changes(*window)
        except ApiError as exc:
            return no_update, error_box(exc.message)
        changes = [
            c
            for c in changes
            if (not kinds or c.get("kind") in kinds) and (not owners or c.get("owner") in owners)
        ]
        return calendar_figure(changes, window=window, now=now), change_listing(changes)

    @app.callback(
        Output(ids.CHANGE_MSG, "children"),
        Output({"type": "change-error", "field": ALL}, "children"),
        Output(ids.CHANGES_RELOAD, "data"),
        Input(ids.CHANGE_SUBMIT, "n_clicks"),
        Input(ids.CHANGE_UPDATE, "n_clicks"),
        State({"type": ids.CHANGE_FORM, "field": ALL}, "value"),
        State({"type": ids.CHANGE_FORM, "field": ALL}, "id"),
        State(ids.CHANGE_EDIT_ID, "value"),
        State(ids.CHANGES_RELOAD, "data"),
        prevent_initial_call=True,
    )
    def save(_create, _update, values, field_ids, edit_id, reload):
        names = [f["field"] for f in field_ids]
        access = context.access()
        if not access.can_write:
            return f"Read-only: {access.read_only_reason}", [""] * len(names), no_update
        editing = dash.ctx.triggered_id == ids.CHANGE_UPDATE
        if editing and not (edit_id or "").strip():
            return "Give the id of the change to edit.", [""] * len(names), no_update
        body, errors = change_body(dict(zip(names, values, strict=True)), partial=editing)
        if not errors:
            try:
                saved = context.client.save_change(
                    body, author=access.user, change_id=edit_id.strip() if editing else None
                )
            except ApiError as exc:
                errors = exc.fields or {"summary": exc.message}
                if not exc.fields:
                    return exc.message, [""] * len(names), no_update
            else:
                verb = "Updated" if editing else "Registered"
                flag = " (flagged unplanned)" if saved.get("unplanned") else ""
                return (
                    f"{verb} {saved.get('id')} as {access.user}{flag}.",
                    [""] * len(names),
                    (reload or 0) + 1,
                )
        return ("Please fix the marked fields.", [errors.get(n, "") for n in names], no_update)
