"""Incidents: the list (open first) and one incident's breach, suspects, chain and notes."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import dash
from dash import Input, Output, State, ctx, dcc, html, no_update

from dashboard import ids
from dashboard.client import ApiError, FetchedSeries
from dashboard.context import Context, serving
from dashboard.figures.histogram import drift_series
from dashboard.figures.incident import incident_figure, suspect_label
from dashboard.figures.sla import sla_matches
from dashboard.selectors import exact
from dashboard.tables import error_box, table, write_button
from dashboard.timeparse import fmt, lead
from dashboard.units import as_drawn, byte_scaled, unit_of

MAX_DRAWN = 5
SHOWN = 10


def list_layout(context: Context, **_query) -> html.Div:
    """Return the incident list, open ones first."""
    try:
        incidents = context.client.incidents()
    except ApiError as exc:
        return error_box(f"Incidents are not available: {exc.message}")
    rows = [
        [
            dcc.Link(f"#{i['id']}", href=context.path(f"/incidents/{i['id']}")),
            i.get("sla", ""),
            html.Span(i.get("status", ""), className=f"pill {i.get('status', '')}"),
            i.get("severity", ""),
            fmt(i.get("breach_start")),
            fmt(i.get("breach_end")),
            _top(i.get("top_suspect")),
        ]
        for i in sorted(incidents, key=lambda i: (i.get("status") != "open", -(i.get("id") or 0)))
    ]
    return html.Div(
        [
            html.H2("Incidents"),
            table(
                ["id", "SLA", "status", "severity", "breach start", "breach end", "top suspect"],
                rows,
                id_="incident-table",
            )
            if rows
            else html.P("No incidents yet.", className="empty"),
        ]
    )


def _top(suspect) -> str:
    if isinstance(suspect, dict):
        return f"{suspect_label(suspect)} ({suspect.get('score', 0):.2f})"
    return str(suspect or "")


def _series_for(context: Context, metric: str, labels: dict, window) -> tuple[list, str]:
    """Return a metric's series in the window as drawn (rate, bytes scaled) and their unit."""
    found = context.client.query_range([exact(metric, labels)], *window)
    if metric.endswith("_bucket"):
        return drift_series(found, windows=120), "PSI"
    unit = unit_of(metric)
    drawn = [FetchedSeries(s.name, s.labels, *as_drawn(s.ts, s.values, unit)) for s in found]
    return byte_scaled(drawn, unit.label)


def view_window(incident: dict, before: float, after: float) -> tuple[float, float]:
    """Return the window shown around a breach, within an imported incident's own data."""
    # An imported bundle holds 20-40 min: an hour either side would be mostly empty.
    start = incident["breach_start"] - before
    end = (incident.get("breach_end") or incident["breach_start"] + 1800) + after
    imported = incident.get("imported")
    if imported:
        start, end = max(start, imported["start"]), min(end, imported["end"])
    return start, end


def board_query(incident: dict, sla: dict) -> dict:
    """Return the board URL query at an incident's breach, for the SLA's model or service."""
    start, end = view_window(incident, 3600, 1800)
    labels = sla.get("labels") or {}
    query = {"model": labels["model"]} if labels.get("model") else {}
    if not query and labels.get("service"):
        query["service"] = labels["service"]
    return {**query, "from": round(start), "to": round(end)}


def _board_link(context: Context, incident: dict, sla: dict) -> str:
    return context.path("/board") + "?" + urlencode(board_query(incident, sla))


def _state_actions(incident: dict, can_write: bool) -> list:
    """Return Acknowledge and Resolve for an open incident, and who took it."""
    if incident.get("status") != "open":
        by = incident.get("resolved_by")
        return [html.Span(f"resolved by {by}" if by else "resolved", className="msg")]
    taken = incident.get("acknowledged_by")
    out: list = [html.Span(state_words(incident), id=ids.INCIDENT_STATE, className="msg")]
    if not taken:
        out.append(write_button("Acknowledge", ids.INCIDENT_ACK, can_write))
    out.append(write_button("Escalate", ids.INCIDENT_ESCALATE, can_write))
    out.append(write_button("Snooze 1 h", ids.INCIDENT_SNOOZE, can_write))
    out.append(
        dcc.Input(
            id=ids.INCIDENT_ASSIGN_TO,
            placeholder="person",
            maxLength=200,
            disabled=not can_write,
            style={"width": "8em"},
        )
    )
    out.append(write_button("Assign", ids.INCIDENT_ASSIGN, can_write))
    out.append(write_button("Resolve (the note below, if any)", ids.INCIDENT_RESOLVE, can_write))
    return out


def state_words(incident: dict) -> str:
    """Say who has an open incident: taken or not, whom it is with, escalations, snooze."""
    taken = incident.get("acknowledged_by")
    said = (
        f"acknowledged by {taken} at {fmt(incident.get('acknowledged_at'))}"
        if taken
        else "not acknowledged"
    )
    with_whom = incident.get("assignee")
    if with_whom and with_whom != taken:
        said += f"; with {with_whom}"
    if incident.get("escalations"):
        said += f"; escalated {incident['escalations']}x, last at {fmt(incident['escalated_at'])}"
    snoozed = incident.get("snoozed_until")
    if snoozed and snoozed > time.time():
        said += f"; snoozed until {fmt(snoozed)}"
    return said


def _imported_badge(incident: dict) -> list:
    """Return the mark of an incident opened from imported data, with where it came from."""
    imported = incident.get("imported")
    if not imported:
        return []
    source = str(imported.get("source") or "")[-80:]
    return [
        " ",
        html.Span(
            "imported",
            id=ids.INCIDENT_IMPORTED,
            className="pill imported",
            title=f"from {source}: data {fmt(imported['start'])} to {fmt(imported['end'])}",
        ),
    ]


def drawn_suspects(suspects: list[dict], top: int = MAX_DRAWN) -> tuple[list[dict], list[dict]]:
    """Return the top suspects to draw: series (one row per metric and labels), and changes."""
    seen: set[tuple] = set()
    rows, changes = [], []
    for suspect in suspects[:top]:
        if suspect.get("kind") == "change":
            changes.append(suspect)
            continue
        key = (suspect.get("metric"), tuple(sorted((suspect.get("labels") or {}).items())))
        if suspect.get("metric") and key not in seen:
            seen.add(key)
            rows.append(suspect)
    return rows, changes


def _figure(context: Context, incident: dict, sla: dict):
    window = view_window(incident, 3600, 900)
    sla_series, sla_unit = _series_for(context, sla["metric"], sla.get("labels") or {}, window)
    sla_series = [s for s in sla_series if sla_matches(sla, s)]
    drawn, units = [], [sla_unit]
    rows, changes = drawn_suspects(incident.get("suspects", []))
    for suspect in rows:
        labels = suspect.get("labels") or {}
        series, unit = _series_for(context, suspect["metric"], labels, window)
        drawn.append((suspect, series))
        units.append(unit)
    breach = (incident["breach_start"], incident.get("breach_end") or window[1])
    return incident_figure(
        sla=sla,
        sla_series=sla_series,
        suspects=drawn,
        breach=breach,
        window=window,
        units=units,
        changes=changes,
    )


def _scope_text(scope: dict) -> str:
    """Return the incident's scope as a person reads it: its kind and where (k=v, ...)."""
    labels = scope.get("labels") or {}
    where = ", ".join(f"{k}={v}" for k, v in labels.items()) if isinstance(labels, dict) else ""
    return str(scope.get("kind", "unknown")) + (f" ({where})" if where else "")


def _runbook(incident: dict) -> list:
    """Return the SLA runbook's link for the header, when its document names one."""
    url = str(incident.get("runbook") or "")
    if not url.startswith(("https://", "http://")):
        return []
    return [" · ", html.A("runbook", href=url, target="_blank", rel="noopener noreferrer")]


def _next_step(suspect: dict) -> str:
    """Return what to try first about a suspect, and whom to ask."""
    step = suspect.get("next_step") or ""
    person = suspect.get("person")
    return f"{step} (ask {person})" if step and person else step


def _suspects_table(incident: dict) -> html.Div:
    rows = [
        [
            s.get("rank"),
            s.get("kind"),
            suspect_label(s),
            f"{s.get('score', 0):.2f}",
            fmt(s.get("onset")),
            lead(s.get("lead_seconds")),
            s.get("owner", ""),
            s.get("evidence", ""),
            _next_step(s),
        ]
        for s in incident.get("suspects", [])
    ]
    headers = [
        "rank",
        "kind",
        "suspect",
        "score",
        "onset",
        "lead",
        "owner",
        "evidence",
        "next step",
    ]
    parts: list = [table(headers, rows[:SHOWN])]
    if len(rows) > SHOWN:
        more = f"{len(rows) - SHOWN} more suspects"
        parts.append(html.Details([html.Summary(more), table(headers, rows[SHOWN:])]))
    return html.Div(parts, id=ids.INCIDENT_SUSPECTS)


def _body(context: Context, incident: dict) -> list:
    slas = {s["name"]: s for s in context.client.slas()}
    sla = slas.get(incident.get("sla"), {"name": incident.get("sla"), "metric": ""})
    parts = [html.H3("Ranked suspects"), _confidence(incident), _suspects_table(incident)]
    if incident.get("analysis_error"):
        parts.append(error_box(f"Analysis failed: {incident['analysis_error']}"))
    if sla.get("metric"):
        parts.append(
            dcc.Graph(
                id="incident-graph",
                figure=_figure(context, incident, sla),
                config={"displaylogo": False},
            )
        )
    return parts


# The readings of a confidence measured on past incidents (correlator.analysis.confidence.say).
MEASURED = ("likely", "possible", "unsure: compare the top 3")


def _confidence(incident: dict) -> html.P:
    """Say how far to trust the top suspect, as the analysis measured it on real incidents."""
    p, says = incident.get("confidence"), incident.get("confidence_says")
    if p is None or not says:
        return html.P(id="incident-confidence")
    text = f"Top suspect: {says}"
    if says in MEASURED:  # else the reading says why no chance is known
        text += f" ({p:.0%} chance it is a root cause, as measured on past incidents)"
    return html.P(text, id="incident-confidence", className=f"confidence {says.split(':')[0]}")


def _chain(incident: dict) -> html.Div:
    segments: list = []
    for seg in incident.get("chain", []):
        segments.append(
            html.Div(
                [
                    html.B(seg.get("segment", "")),
                    html.Div(seg.get("component") or "—"),
                    html.Div(f"owner: {seg.get('owner', '')}"),
                    html.Div(seg.get("evidence", ""), className="small"),
                ],
                className=f"segment {seg.get('status', '')}",
            )
        )
        segments.append(html.Span("→", className="arrow"))
    return html.Div(segments[:-1], className="chain")


def _notes(incident: dict) -> html.Ul:
    return html.Ul(
        [
            html.Li(
                [
                    html.B(n.get("author", "")),
                    f" ({n.get('team', '')}, {fmt(n.get('ts'))}): ",
                    n.get("text", ""),
                ]
            )
            for n in incident.get("notes", [])
        ],
        id=ids.INCIDENT_NOTES,
    )


def changes_table(changes: list[dict]) -> html.Table:
    """Return the table of the changes in an incident's window, every column named."""
    rows = [
        [
            c.get("id"),
            fmt(c.get("ts")),
            c.get("kind"),
            c.get("owner"),
            c.get("summary", ""),
            "unplanned" if c.get("unplanned") else "",
        ]
        for c in changes
    ]
    return table(["id", "time", "kind", "owner", "summary", "flag"], rows, id_="incident-changes")


def detail_layout(context: Context, incident_id: str = "", **_query) -> html.Div:
    """Return one incident's page."""
    if not str(incident_id).isascii() or not str(incident_id).isdigit():
        shown = str(incident_id)[:40]
        return error_box(
            f"No incident {shown!r}: an incident's address is /incidents/ and its number, "
            "as /incidents/12; the list is at /incidents"
        )
    try:
        incident = context.client.incident(incident_id)
        slas = {s["name"]: s for s in context.client.slas()}
    except ApiError as exc:
        if exc.status == 404:
            return error_box(f"No incident {incident_id}: the list is at /incidents")
        return error_box(f"Incident {incident_id}: {exc.message}")
    if not isinstance(incident, dict) or incident.get("breach_start") is None:
        return error_box(f"No incident {incident_id}: the list is at /incidents")
    sla = slas.get(incident.get("sla"), {})
    access = context.access()
    scope = incident.get("scope") or {}
    oncall = incident.get("oncall") or {}
    who = " · ".join(
        f"{team}: {(p or {}).get('person', 'nobody')}" for team, p in sorted(oncall.items())
    )
    return html.Div(
        [
            dcc.Store(id=ids.INCIDENT_ID, data=incident.get("id")),
            html.H2(f"Incident #{incident.get('id')}: {incident.get('sla', '')}"),
            html.P(incident.get("headline") or "", id=ids.INCIDENT_HEADLINE, className="headline"),
            html.P(
                [
                    html.Span(
                        incident.get("status", ""), className=f"pill {incident.get('status')}"
                    ),
                    *_imported_badge(incident),
                    f" {incident.get('severity', '')} · breach "
                    f"{fmt(incident.get('breach_start'))} → "
                    f"{fmt(incident.get('breach_end'))} · scope: {_scope_text(scope)}"
                    f" · on call at the breach: {who or 'nobody'} · ",
                    html.A(
                        "open the joint board at the breach",
                        href=_board_link(context, incident, sla) if sla else "#",
                    ),
                    *_runbook(incident),
                ]
            ),
            html.Div(
                [
                    *_state_actions(incident, access.can_write),
                    write_button("Re-rank", ids.INCIDENT_RERANK, access.can_write),
                    html.Span(id=ids.INCIDENT_RERANK_MSG, className="msg"),
                    html.Button("Export review (Markdown)", id="incident-review", n_clicks=0),
                    dcc.Download(id="incident-review-download"),
                ],
                className="actions",
            ),
            html.Div(_body(context, incident), id=ids.INCIDENT_BODY),
            html.H3("Chain: input → model → output → downstream"),
            _chain(incident),
            html.H3("Changes in the window"),
            changes_table(incident.get("changes", [])),
            html.H3("Notes"),
            _notes(incident),
            html.Div(
                [
                    dcc.Textarea(
                        id=ids.INCIDENT_NOTE_TEXT,
                        placeholder="what did you check?",
                        disabled=not access.can_write,
                    ),
                    dcc.Dropdown(
                        id=ids.INCIDENT_NOTE_TEAM,
                        options=["algo", "infra", "other"],
                        value="other",
                        clearable=False,
                    ),
                    write_button("Add note", ids.INCIDENT_NOTE_ADD, access.can_write),
                    html.Span(id=ids.INCIDENT_NOTE_MSG, className="msg"),
                ],
                className="note-form",
            ),
        ]
    )


def register(app: dash.Dash, context: Context) -> None:
    """Add the incident pages and their callbacks."""
    dash.register_page(
        "incidents",
        path="/incidents",
        name="Incidents",
        title="causeline · incidents",
        layout=lambda **q: list_layout(serving(context), **q),
    )
    dash.register_page(
        "incident",
        path_template="/incidents/<incident_id>",
        name="Incident",
        title="causeline · incident",
        layout=lambda **q: detail_layout(serving(context), **q),
    )

    @app.callback(
        Output(ids.INCIDENT_NOTES, "children"),
        Output(ids.INCIDENT_NOTE_MSG, "children"),
        Output(ids.INCIDENT_NOTE_TEXT, "value"),
        Input(ids.INCIDENT_NOTE_ADD, "n_clicks"),
        State(ids.INCIDENT_ID, "data"),
        State(ids.INCIDENT_NOTE_TEXT, "value"),
        State(ids.INCIDENT_NOTE_TEAM, "value"),
        prevent_initial_call=True,
    )
    def add_note(_clicks, incident_id, text, team):
        access = context.access()
        if not access.can_write:
            return no_update, f"Read-only: {access.read_only_reason}", no_update
        if not (text or "").strip():
            return no_update, "Write something first.", no_update
        try:
            context.client.act_on_incident(
                incident_id, "notes", {"team": team, "text": text.strip()}, author=access.user
            )
            incident = context.client.incident(incident_id)
        except ApiError as exc:
            return no_update, exc.message, no_update
        return _notes(incident).children, f"Note added by {access.user}.", ""

    @app.callback(
        Output(ids.INCIDENT_STATE, "children"),
        Output(ids.INCIDENT_NOTES, "children", allow_duplicate=True),
        Input(ids.INCIDENT_ACK, "n_clicks"),
        Input(ids.INCIDENT_ESCALATE, "n_clicks"),
        Input(ids.INCIDENT_SNOOZE, "n_clicks"),
        Input(ids.INCIDENT_ASSIGN, "n_clicks"),
        Input(ids.INCIDENT_RESOLVE, "n_clicks"),
        State(ids.INCIDENT_ID, "data"),
        State(ids.INCIDENT_NOTE_TEXT, "value"),
        State(ids.INCIDENT_ASSIGN_TO, "value"),
        prevent_initial_call=True,
    )
    def act(_ack, _escalate, _snooze, _assign, _resolve, incident_id, text, person):
        access = context.access()
        if not access.can_write:
            return f"Read-only: {access.read_only_reason}", no_update
        action = {
            ids.INCIDENT_RESOLVE: "resolve",
            ids.INCIDENT_ESCALATE: "escalate",
            ids.INCIDENT_SNOOZE: "snooze",
            ids.INCIDENT_ASSIGN: "assign",
        }.get(ctx.triggered_id, "acknowledge")
        body = {"text": text.strip()} if action == "resolve" and (text or "").strip() else {}
        if action == "assign":
            if not (person or "").strip():
                return "Assign: type whom to give it to first.", no_update
            body = {"person": person.strip()}
        try:
            incident = context.client.act_on_incident(incident_id, action, body, author=access.user)
        except ApiError as exc:
            return exc.message, no_update
        said = f"resolved by {access.user}" if action == "resolve" else state_words(incident)
        return said, _notes(incident).children

    @app.callback(
        Output(ids.INCIDENT_BODY, "children"),
        Output(ids.INCIDENT_RERANK_MSG, "children"),
        Input(ids.INCIDENT_RERANK, "n_clicks"),
        State(ids.INCIDENT_ID, "data"),
        prevent_initial_call=True,
    )
    def rerank(_clicks, incident_id):
        access = context.access()
        if not access.can_write:
            return no_update, f"Read-only: {access.read_only_reason}"
        try:
            incident = context.client.act_on_incident(incident_id, "rerank", {}, author=access.user)
        except ApiError as exc:
            return no_update, exc.message
        return _body(context, incident), f"Re-ranked at {fmt(incident.get('reranked_at'))}."

    @app.callback(
        Output("incident-review-download", "data"),
        Input("incident-review", "n_clicks"),
        State(ids.INCIDENT_ID, "data"),
        prevent_initial_call=True,
    )
    def review(_clicks, incident_id):
        try:
            text = context.client.incident_review(incident_id)
        except ApiError as exc:
            text = f"review not available: {exc.message}"
        return {"content": str(text), "filename": f"incident-{incident_id}-review.md"}
