"""The joint board: SLA, suspect, own, model and system panels on one time axis."""

from __future__ import annotations

import re
import time
from typing import Literal
from urllib.parse import urlencode

import dash
from dash import Input, Output, State, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from dashboard import ids, urlquery
from dashboard.board_data import BoardView, load_board
from dashboard.client import ApiError
from dashboard.context import Context, serving
from dashboard.figures.board import board_figure
from dashboard.pages import own_panels
from dashboard.panels import model_scope, models_of
from dashboard.selectors import selector
from dashboard.series_panels import read_panel_param
from dashboard.timeparse import (
    DEFAULT_PRESET,
    PRESETS,
    TIME_HINT,
    axis_time,
    fmt,
    parse_when,
    preset_window,
    zone_label,
    zone_offset,
)

MAX_OPTIONS = 1000
REFRESH_CHOICES = {"off": 0, "10 s": 10, "30 s": 30, "1 min": 60, "5 min": 300}
LEGACY_REFRESH = 30  # ?refresh=1, as older links say it
MAX_TYPED_WINDOW = 90 * 86400  # seconds a typed absolute range may span
_ZOOM_KEY = re.compile(r"xaxis\d*\.range\[([01])\]")
KEY = [
    html.Span("lines: "),
    html.Span("···· p50", className="k"),
    html.Span("-·- p90", className="k"),
    html.Span("– – p95", className="k"),
    html.Span("—— p99", className="k"),
    html.Span("—  — avg", className="k"),
    html.Span("▼ ┊ a change (purple algo, teal infra; thick: a suspect)", className="k"),
    html.Span("▮ SLA breach", className="k breach"),
    html.Span("···· SLA threshold", className="k threshold"),
]


def _initial(query: dict, models: list[str]) -> dict:
    start = parse_when(urlquery.one(query, "from"))
    end = parse_when(urlquery.one(query, "to"))
    preset = urlquery.one(query, "range")
    preset = preset if preset in PRESETS else DEFAULT_PRESET
    if start is None or end is None or end <= start:
        start, end = preset_window(preset)
    else:
        preset = "custom"
    model = urlquery.one(query, "model")
    if model is None and not urlquery.many(query, "service"):
        model = models[0] if models else None
    return {"model": model or None, "start": start, "end": end, "preset": preset}


def query_problems(query: dict) -> list[str]:
    """Return what the URL asked for that the board cannot show, each with what it shows."""
    said = []
    start_text, end_text = urlquery.one(query, "from"), urlquery.one(query, "to")
    for key, text in (("from", start_text), ("to", end_text)):
        if text not in (None, "") and parse_when(text) is None:
            said.append(
                f"{key}={str(text)[:40]!r} is not a time: give unix seconds, an ISO time "
                "(2024-11-25T08:00Z) or now-2h"
            )
    start, end = parse_when(start_text), parse_when(end_text)
    if start is not None and end is not None and end <= start:
        said.append("to is not after from")
    if (start is None) != (end is None) and not said:
        said.append("give both from and to")
    preset = urlquery.one(query, "range")
    if preset not in (None, "") and preset not in PRESETS:
        said.append(f"range={str(preset)[:40]!r} is not one of {', '.join(PRESETS)}")
    if said:
        said.append(f"showing the last {DEFAULT_PRESET} instead")
    return said


def refresh_seconds(value) -> int:
    """Return the auto-refresh period a URL or control asks for, 0 for off."""
    try:
        seconds = int(str(value))
    except (TypeError, ValueError):
        return 0
    if seconds == 1:
        return LEGACY_REFRESH
    return seconds if seconds in REFRESH_CHOICES.values() else 0


def effective_zone(choice: str | None, browser: str | None) -> str:
    """Return the zone the board's times read in: the browser's for 'local', else UTC."""
    return browser if choice == "local" and browser else "UTC"


def _dropdown(id_, label, options, value, multi=True, clearable=True):
    chosen = value if isinstance(value, list) else [value] if value else []
    options = list(dict.fromkeys([*options, *chosen]))  # a typed value stays chosen
    return html.Label(
        [
            label,
            dcc.Dropdown(id=id_, options=options, value=value, multi=multi, clearable=clearable),
        ],
        className="control",
    )


def label_values(ctx_: Context, name: str, match: str | None = None) -> list[str]:
    """Return a label's stored values ([] when the service cannot say)."""
    try:
        return ctx_.client.label_values(name, match=match, limit=MAX_OPTIONS)
    except ApiError:
        return []


def _gpus(ctx_: Context, hosts: list[str]) -> list[str]:
    """Return the GPU indexes seen on the hosts."""
    if not hosts:
        return []
    found = label_values(ctx_, "gpu", selector("gpu_utilization_percent", {"host": hosts}))
    return sorted(found, key=lambda g: (len(g), g))


def scope_options(ctx_: Context, topology: dict, model: str | None) -> tuple[list, list]:
    """Return the instance and host choices: the model's (topology, else labels), else all."""
    instances, hosts = model_scope(topology, model)
    if model and not instances:
        instances = label_values(ctx_, "instance", selector(None, {"model": [model]}))
    if not model:
        instances, hosts = label_values(ctx_, "instance"), label_values(ctx_, "host")
    return instances, hosts


def layout(ctx_: Context, **query) -> html.Div:
    """Return the board's layout for a URL's query."""
    try:
        topology, slas = ctx_.client.topology(), ctx_.client.slas()
    except ApiError as exc:
        return html.Div(f"The service did not answer: {exc.message}", className="error")
    models = sorted(set(models_of(topology, slas)) | set(label_values(ctx_, "model")))
    services = label_values(ctx_, "service")
    services = sorted(
        set(services)
        | {
            str(s["labels"]["service"])
            for s in slas
            if (s.get("labels") or {}).get("service") is not None
        }
    )
    panels = [p for p in urlquery.repeated(query, "panel") if read_panel_param(p)]
    state = _initial(query, models)
    chosen_services = urlquery.many(query, "service")
    instances, hosts = scope_options(ctx_, topology, state["model"])
    if not (state["model"] or chosen_services or panels or services or slas or hosts):
        return html.Div(
            ["No data yet. Run ", html.Code("causeline demo"), " to load a demo incident."],
            className="empty",
        )
    refresh = refresh_seconds(urlquery.one(query, "refresh"))
    chosen_hosts = urlquery.many(query, "host")
    scope = [
        _dropdown(ids.BOARD_MODEL, "Model", models, state["model"], multi=False),
        _dropdown(ids.BOARD_SERVICE, "Service", services, chosen_services),
        _dropdown(ids.BOARD_INSTANCE, "Instance", instances, urlquery.many(query, "instance")),
        _dropdown(ids.BOARD_HOST, "Host", hosts, chosen_hosts),
        _dropdown(
            ids.BOARD_GPU, "GPU", _gpus(ctx_, chosen_hosts or hosts), urlquery.many(query, "gpu")
        ),
    ]
    zone = "local" if urlquery.one(query, "tz") == "local" else "UTC"
    controls = [*scope, *_time_controls(state["preset"], zone), _refresh_control(refresh)]
    head = [  # the controls, then the status and line key that stay in view
        html.Div(
            [*controls, html.A("link to this view", id=ids.BOARD_LINK, href="#")],
            className="controls",
        ),
        html.Div(
            [html.Div(id=ids.BOARD_STATUS, className="status"), html.Div(KEY, className="key")],
            className="board-head",
        ),
    ]
    problems = query_problems(query)
    if problems:
        head.append(html.Div("; ".join(problems), id=ids.BOARD_QUERY_PROBLEMS, className="error"))
    return html.Div(
        [
            *head,
            own_panels.controls(panels),
            html.Div(id=ids.BOARD_NOTES, className="notes"),
            dcc.Graph(id=ids.BOARD_GRAPH, config={"displaylogo": False, "scrollZoom": False}),
            dcc.Store(id=ids.BOARD_WINDOW, data=state),
            dcc.Store(id=ids.BOARD_VIEW_URL),
            dcc.Store(id=ids.BOARD_KEPT, storage_type="local"),
            dcc.Store(id=ids.BOARD_BROWSER_ZONE),
            dcc.Interval(
                id=ids.BOARD_INTERVAL,
                interval=max(refresh, LEGACY_REFRESH) * 1000,
                disabled=not refresh,
            ),
        ]
    )


def _time_controls(preset: str, zone: str) -> list:
    """Return the window's controls: the presets, a typed range, the zone times read in."""
    presets = [{"label": k, "value": k} for k in PRESETS] + [{"label": "custom", "value": "custom"}]
    zones = [{"label": "UTC", "value": "UTC"}, {"label": "local", "value": "local"}]
    return [
        html.Label(
            [
                "Last",
                dcc.RadioItems(id=ids.BOARD_PRESET, options=presets, value=preset, inline=True),
            ],
            className="control",
        ),
        html.Div(
            [
                html.Label(["From", _typed(ids.BOARD_FROM, "now-2h")]),
                html.Label(["To", _typed(ids.BOARD_TO, "now")]),
                html.Button("Apply", id=ids.BOARD_APPLY, n_clicks=0),
                html.Span(id=ids.BOARD_RANGE_MSG, className="field-error"),
            ],
            className="control typed-range",
        ),
        html.Label(
            ["Times in", dcc.RadioItems(id=ids.BOARD_ZONE, options=zones, value=zone, inline=True)],
            className="control narrow",
        ),
    ]


def _refresh_control(refresh: int) -> html.Label:
    """Return the auto-refresh choice."""
    return html.Label(
        [
            "Auto-refresh",
            dcc.Dropdown(
                id=ids.BOARD_REFRESH,
                options=[{"label": k, "value": v} for k, v in REFRESH_CHOICES.items()],
                value=refresh,
                clearable=False,
                searchable=False,
            ),
        ],
        className="control narrow",
    )


def _typed(id_: str, placeholder: str) -> dcc.Input:
    """Return a text box for one end of an absolute range."""
    return dcc.Input(
        id=id_,
        type="text",
        placeholder=placeholder,
        debounce=True,
        maxLength=64,
        className="typed-time",
    )


def _zoomed(
    relayout: dict | None, offset: float = 0.0
) -> tuple[float, float] | Literal[True] | None:
    """Return the zoomed window, True for a reset, None when the event is no zoom.

    Any panel's time axis may carry the zoom (they are matched); ``offset`` is the seconds
    the axes were moved by to read in a local zone.
    """
    if not relayout:
        return None
    if any(k.startswith("xaxis") and k.endswith(".autorange") and v for k, v in relayout.items()):
        return True
    ends: dict[str, object] = {}
    for key, value in relayout.items():
        if m := _ZOOM_KEY.fullmatch(key):
            ends.setdefault(m.group(1), value)
        elif key.startswith("xaxis") and key.endswith(".range") and _pair(value):
            ends.setdefault("0", value[0])
            ends.setdefault("1", value[1])
    lo, hi = ends.get("0"), ends.get("1")
    if lo is None or hi is None:
        return None
    try:
        lo, hi = axis_time(lo) - offset, axis_time(hi) - offset
    except (TypeError, ValueError, OverflowError):
        return None
    return (lo, hi) if lo < hi else None


def _pair(value) -> bool:
    return isinstance(value, list) and len(value) == 2


def typed_window(
    state: dict, typed_from: str | None, typed_to: str | None, zone: str, *, now: float
) -> tuple[dict | None, str]:
    """Return the window a person typed (or None) and what is wrong with it."""
    start = parse_when(typed_from, now=now, zone=zone)
    end = parse_when(typed_to or "now", now=now, zone=zone)
    if start is None:
        return None, f"From: give {TIME_HINT}"
    if end is None:
        return None, f"To: give {TIME_HINT}"
    if end <= start:
        return None, "To must be after From"
    if end - start > MAX_TYPED_WINDOW:
        return None, f"at most {MAX_TYPED_WINDOW // 86400} days at once"
    new = {**state, "start": start, "end": end, "preset": "custom"}
    if state.get("preset") != "custom":
        new["last_preset"] = state.get("preset")
    return new, ""


def next_window(
    trigger: str, state: dict, preset: str, relayout: dict | None, *, offset: float = 0.0
) -> dict | None:
    """Return the window after an event, or None when nothing changes."""
    state = dict(state)
    if trigger == ids.BOARD_GRAPH:
        zoom = _zoomed(relayout, offset)
        if zoom is None:
            return None
        if zoom is True:
            back = state.get("last_preset", DEFAULT_PRESET)
            state["start"], state["end"] = preset_window(back)
            state["preset"] = back
        else:
            state["start"], state["end"] = zoom
            if state.get("preset") != "custom":
                state["last_preset"] = state.get("preset")
            state["preset"] = "custom"
        return state
    if trigger == ids.BOARD_PRESET and preset != "custom":
        state["start"], state["end"] = preset_window(preset)
        state["preset"] = preset
    elif trigger == ids.BOARD_INTERVAL and state.get("preset") in PRESETS:
        state["start"], state["end"] = preset_window(state["preset"])
    return state


def view_url(
    state: dict, instances, hosts, gpus, refresh, *, services=(), panels=(), zone="UTC"
) -> str:
    """Return the board URL query of a view (every view is a link)."""
    query: dict = {"model": state["model"]} if state.get("model") else {}
    if state.get("preset") in PRESETS:
        query["range"] = state["preset"]
    else:
        query.update({"from": round(state["start"]), "to": round(state["end"])})
    for key, values in (
        ("service", services),
        ("instance", instances),
        ("host", hosts),
        ("gpu", gpus),
    ):
        if values:
            query[key] = ",".join(values)
    if panels:
        query["panel"] = list(panels)
    if refresh_seconds(refresh):
        query["refresh"] = str(refresh_seconds(refresh))
    if zone == "local":
        query["tz"] = "local"
    return "?" + urlencode(query, doseq=True)


def counted(n: int, one: str, many: str | None = None) -> str:
    """Return a count with its noun: '1 change', '3 changes', '1,200 points'."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _status(state: dict, data, context: Context, zone: str = "UTC") -> list:
    parts: list = [
        f"{fmt(state['start'], zone)} → {fmt(state['end'], zone)} "
        f"(times in {zone_label(zone, state['end'])}) · {counted(len(data.changes), 'change')} · "
        f"{counted(len(data.breaches), 'SLA breach', 'SLA breaches')} · "
        f"{counted(len(data.panels), 'panel')} · "
        f"{counted(data.points, 'point')} drawn (fetched in {data.seconds:.2f} s) · "
        "drag on a panel to zoom, double-click to reset"
    ]
    if data.incident:
        number = int(data.incident["id"])
        link = html.A(f"incident #{number}", href=context.path(f"/incidents/{number}"))
        parts += [" · suspects of ", link]
    return parts


def _notes(data, view: BoardView, state: dict, ctx_: Context) -> list:
    items = [html.Li(note, className="no-data") for note in data.notes]
    missing = f"no data for model={view.model} in this window" in data.notes
    if (
        view.model
        and missing
        and label_values(ctx_, "service", selector(None, {"service": [view.model]}))
    ):
        query = {"service": view.model, "from": round(state["start"]), "to": round(state["end"])}
        link = html.A(f"show service={view.model}", href="?" + urlencode(query))
        items.append(html.Li([f"{view.model} is a service: ", link]))
    if data.hidden:
        items.append(
            html.Li(
                f"No data in this window, so not drawn: {', '.join(data.hidden)}.",
                className="hidden-panels",
            )
        )
    if not data.panels and not data.notes:
        items.append(html.Li("Nothing to draw: choose a model or a service, or add a panel."))
    return [html.Ul(items)] if items else []


def render_board(context: Context, state: dict, choice: dict, zone: str = "UTC") -> tuple:
    """Return the figure, the view's URL query, the status line, the notes and graph style."""
    view = BoardView(
        choice["model"] or None,
        state["start"],
        state["end"],
        choice["instances"],
        choice["hosts"],
        choice["gpus"],
        choice["services"],
        [p for p in (read_panel_param(v) for v in choice["panels"]) if p],
    )
    data = load_board(context.client, view, max_points=context.settings.max_points)
    fig = board_figure(
        data.panels,
        window=(state["start"], state["end"]),
        changes=data.changes,
        breaches=data.breaches,
        thresholds=data.thresholds,
        revision=view.model or ",".join(view.services) or "board",
        offset=zone_offset(zone, state["end"]),
    )
    url = view_url(
        {**state, "model": view.model},
        view.instances,
        view.hosts,
        view.gpus,
        choice["refresh"],
        services=view.services,
        panels=choice["panels"],
        zone="UTC" if zone == "UTC" else "local",
    )
    style = {} if data.panels else {"display": "none"}
    notes = _notes(data, view, state, context)
    return fig, url, _status(state, data, context, zone), notes, style


def register(app: dash.Dash, context: Context) -> None:
    """Add the board page and its callbacks."""
    _register_pages(context)
    _register_window(app)
    _register_render(app, context)
    _register_refresh(app)
    _register_browser(app)
    own_panels.register(app)


def _register_pages(context: Context) -> None:
    """Serve the board at /board and at the site's root."""
    dash.register_page(
        "board",
        path="/board",
        name="Board",
        title="causeline · board",
        layout=lambda **q: layout(serving(context), **q),
        order=0,
    )
    dash.register_page(
        "home",
        path="/",
        name="Board",
        title="causeline · board",
        layout=lambda **q: layout(serving(context), **q),
        order=1,
    )


def _register_window(app: dash.Dash) -> None:
    """Move the time window on a preset, a zoom, a typed range or the refresh tick."""

    @app.callback(
        Output(ids.BOARD_WINDOW, "data"),
        Output(ids.BOARD_PRESET, "value"),
        Output(ids.BOARD_RANGE_MSG, "children"),
        Input(ids.BOARD_PRESET, "value"),
        Input(ids.BOARD_INTERVAL, "n_intervals"),
        Input(ids.BOARD_GRAPH, "relayoutData"),
        Input(ids.BOARD_APPLY, "n_clicks"),
        Input(ids.BOARD_FROM, "value"),
        Input(ids.BOARD_TO, "value"),
        State(ids.BOARD_WINDOW, "data"),
        State(ids.BOARD_ZONE, "value"),
        State(ids.BOARD_BROWSER_ZONE, "data"),
        prevent_initial_call=True,
    )
    def move_window(preset, _n, relayout, _apply, typed_from, typed_to, state, zone, browser):
        zone = effective_zone(zone, browser)
        if ctx.triggered_id in (ids.BOARD_APPLY, ids.BOARD_FROM, ids.BOARD_TO):
            if not typed_from:
                raise PreventUpdate
            new, error = typed_window(state, typed_from, typed_to, zone, now=time.time())
            if new is None:
                return no_update, no_update, error
        else:
            offset = zone_offset(zone, state["end"])
            new = next_window(ctx.triggered_id, state, preset, relayout, offset=offset)
        if new is None or new == state:
            raise PreventUpdate
        return new, new["preset"], ""


def _register_render(app: dash.Dash, context: Context) -> None:
    """Draw the board again when the window or a choice changes."""

    @app.callback(
        Output(ids.BOARD_GRAPH, "figure"),
        Output(ids.BOARD_VIEW_URL, "data"),
        Output(ids.BOARD_STATUS, "children"),
        Output(ids.BOARD_NOTES, "children"),
        Output(ids.BOARD_GRAPH, "style"),
        Input(ids.BOARD_MODEL, "value"),
        Input(ids.BOARD_SERVICE, "value"),
        Input(ids.BOARD_INSTANCE, "value"),
        Input(ids.BOARD_HOST, "value"),
        Input(ids.BOARD_GPU, "value"),
        Input(ids.BOARD_REFRESH, "value"),
        Input(ids.BOARD_WINDOW, "data"),
        Input(ids.BOARD_PANELS, "value"),
        Input(ids.BOARD_ZONE, "value"),
        Input(ids.BOARD_BROWSER_ZONE, "data"),
    )
    def render(model, services, instances, hosts, gpus, refresh, state, panels, zone, browser):
        if zone == "local" and not browser:
            raise PreventUpdate  # the browser's zone comes next
        choice = {
            "model": next(iter(urlquery.listed(model)), None),
            "services": urlquery.listed(services),
            "instances": urlquery.listed(instances),
            "hosts": urlquery.listed(hosts),
            "gpus": urlquery.listed(gpus),
            "refresh": refresh,
            "panels": urlquery.listed(panels),
        }
        try:
            return render_board(context, state, choice, effective_zone(zone, browser))
        except ApiError as exc:
            message = f"The service did not answer: {exc.message}"
            return no_update, no_update, message, [], no_update


def _register_refresh(app: dash.Dash) -> None:
    """Start or stop the refresh tick when its choice changes."""

    @app.callback(
        Output(ids.BOARD_INTERVAL, "disabled"),
        Output(ids.BOARD_INTERVAL, "interval"),
        Input(ids.BOARD_REFRESH, "value"),
    )
    def set_refresh(value):
        seconds = refresh_seconds(value)
        return not seconds, max(seconds, 1) * 1000


def _register_browser(app: dash.Dash) -> None:
    """Ask the browser its time zone, and keep its address bar on the view shown."""

    app.clientside_callback(
        """
        function(zone) {
            if (zone !== "local") { return window.dash_clientside.no_update; }
            try { return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"; }
            catch (e) { return "UTC"; }
        }
        """,
        Output(ids.BOARD_BROWSER_ZONE, "data"),
        Input(ids.BOARD_ZONE, "value"),
    )

    app.clientside_callback(
        """
        function(query) {
            if (!query) { return window.dash_clientside.no_update; }
            const url = window.location.pathname + query;
            window.history.replaceState(null, "", url);
            return url;
        }
        """,
        Output(ids.BOARD_LINK, "href"),
        Input(ids.BOARD_VIEW_URL, "data"),
    )


def register_filters(app: dash.Dash, context: Context) -> None:
    """Refresh the instance and host choices when the model changes."""

    @app.callback(
        Output(ids.BOARD_INSTANCE, "options"),
        Output(ids.BOARD_HOST, "options"),
        Output(ids.BOARD_INSTANCE, "value"),
        Output(ids.BOARD_HOST, "value"),
        Input(ids.BOARD_MODEL, "value"),
        prevent_initial_call=True,
    )
    def scope(model):
        try:
            topology = context.client.topology()
        except ApiError:
            topology = {}
        model = next(iter(urlquery.listed(model)), None)
        instances, hosts = scope_options(context, topology, model)
        return instances, hosts, [], []
