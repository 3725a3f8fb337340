"""The joint board: model and system panels on one time axis, with changes and breaches."""

from __future__ import annotations

from urllib.parse import urlencode

import dash
from dash import Input, Output, State, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from dashboard import ids
from dashboard.board_data import BoardView, load_board
from dashboard.client import ApiError
from dashboard.context import Context
from dashboard.figures.board import board_figure
from dashboard.panels import model_scope, models_of, selector
from dashboard.timeparse import DEFAULT_PRESET, PRESETS, axis_time, fmt, parse_when, preset_window

REFRESH_MS = 30_000


def _split(text: str | None) -> list[str]:
    return [p for p in (text or "").split(",") if p]


def _initial(query: dict, models: list[str]) -> dict:
    start, end = parse_when(query.get("from")), parse_when(query.get("to"))
    preset = query.get("range") if query.get("range") in PRESETS else DEFAULT_PRESET
    if start is None or end is None or end <= start:
        start, end = preset_window(preset)
    else:
        preset = "custom"
    return {
        "model": query.get("model") or (models[0] if models else None),
        "start": start,
        "end": end,
        "preset": preset,
    }


def _dropdown(id_, label, options, value, multi=True):
    return html.Label(
        [label, dcc.Dropdown(id=id_, options=options, value=value, multi=multi, clearable=multi)],
        className="control",
    )


def _gpus(ctx_: Context, hosts: list[str]) -> list[str]:
    """Return the GPU indexes seen on the hosts."""
    if not hosts:
        return []
    found = ctx_.client.series(selector("gpu_utilization_percent", {"host": hosts}))
    return sorted({s["labels"].get("gpu", "") for s in found} - {""}, key=lambda g: (len(g), g))


def layout(ctx_: Context, **query) -> html.Div:
    """Return the board's layout for a URL's query."""
    try:
        topology, slas = ctx_.client.topology(), ctx_.client.slas()
    except ApiError as exc:
        return html.Div(f"The service did not answer: {exc.message}", className="error")
    models = models_of(topology, slas)
    state = _initial(query, models)
    if not state["model"]:
        return html.Div(
            ["No model data yet. Run ", html.Code("causeline demo"), " to load a demo incident."],
            className="empty",
        )
    instances, hosts = model_scope(topology, state["model"])
    refresh = query.get("refresh") == "1"
    presets = [{"label": k, "value": k} for k in PRESETS] + [{"label": "zoomed", "value": "custom"}]
    return html.Div(
        [
            html.Div(
                [
                    _dropdown(ids.BOARD_MODEL, "Model", models, state["model"], multi=False),
                    _dropdown(
                        ids.BOARD_INSTANCE, "Instance", instances, _split(query.get("instance"))
                    ),
                    _dropdown(ids.BOARD_HOST, "Host", hosts, _split(query.get("host"))),
                    _dropdown(
                        ids.BOARD_GPU,
                        "GPU",
                        _gpus(ctx_, hosts),
                        _split(query.get("gpu")),
                    ),
                    html.Label(
                        [
                            "Range",
                            dcc.RadioItems(
                                id=ids.BOARD_PRESET,
                                options=presets,
                                value=state["preset"],
                                inline=True,
                            ),
                        ],
                        className="control",
                    ),
                    dcc.Checklist(
                        id=ids.BOARD_REFRESH,
                        options=[{"label": " auto-refresh (30 s)", "value": "on"}],
                        value=["on"] if refresh else [],
                    ),
                    html.A("link to this view", id=ids.BOARD_LINK, href="#"),
                ],
                className="controls",
            ),
            html.Div(id=ids.BOARD_STATUS, className="status"),
            dcc.Graph(id=ids.BOARD_GRAPH, config={"displaylogo": False, "scrollZoom": False}),
            dcc.Store(id=ids.BOARD_WINDOW, data=state),
            dcc.Store(id=ids.BOARD_VIEW_URL),
            dcc.Interval(id=ids.BOARD_INTERVAL, interval=REFRESH_MS, disabled=not refresh),
        ]
    )


def _zoomed(relayout: dict | None) -> tuple[float, float] | None | bool:
    """Return the zoomed window, True for a reset, None when the event is no zoom."""
    if not relayout:
        return None
    if relayout.get("xaxis.autorange"):
        return True
    lo = relayout.get("xaxis.range[0]")
    hi = relayout.get("xaxis.range[1]")
    if lo is None and isinstance(relayout.get("xaxis.range"), list):
        lo, hi = relayout["xaxis.range"]
    if lo is None or hi is None:
        return None
    return axis_time(lo), axis_time(hi)


def next_window(trigger: str, state: dict, preset: str, relayout: dict | None) -> dict | None:
    """Return the window after an event, or None when nothing changes."""
    state = dict(state)
    if trigger == ids.BOARD_GRAPH:
        zoom = _zoomed(relayout)
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


def view_url(state: dict, instances, hosts, gpus, refresh) -> str:
    """Return the board URL query of a view (every view is a link)."""
    query = {"model": state["model"], "from": round(state["start"]), "to": round(state["end"])}
    if state.get("preset") in PRESETS:
        query = {"model": state["model"], "range": state["preset"]}
    for key, values in (("instance", instances), ("host", hosts), ("gpu", gpus)):
        if values:
            query[key] = ",".join(values)
    if refresh:
        query["refresh"] = "1"
    return "?" + urlencode(query)


def register(app: dash.Dash, context: Context) -> None:
    """Add the board page and its callbacks."""
    dash.register_page(
        "board",
        path="/board",
        name="Board",
        title="causeline · board",
        layout=lambda **q: layout(context, **q),
        order=0,
    )
    dash.register_page(
        "home",
        path="/",
        name="Board",
        title="causeline · board",
        layout=lambda **q: layout(context, **q),
        order=1,
    )

    @app.callback(
        Output(ids.BOARD_WINDOW, "data"),
        Output(ids.BOARD_PRESET, "value"),
        Input(ids.BOARD_PRESET, "value"),
        Input(ids.BOARD_INTERVAL, "n_intervals"),
        Input(ids.BOARD_GRAPH, "relayoutData"),
        State(ids.BOARD_WINDOW, "data"),
        prevent_initial_call=True,
    )
    def move_window(preset, _n, relayout, state):
        new = next_window(ctx.triggered_id, state, preset, relayout)
        if new is None or new == state:
            raise PreventUpdate
        return new, new["preset"]

    @app.callback(
        Output(ids.BOARD_GRAPH, "figure"),
        Output(ids.BOARD_VIEW_URL, "data"),
        Output(ids.BOARD_STATUS, "children"),
        Input(ids.BOARD_MODEL, "value"),
        Input(ids.BOARD_INSTANCE, "value"),
        Input(ids.BOARD_HOST, "value"),
        Input(ids.BOARD_GPU, "value"),
        Input(ids.BOARD_REFRESH, "value"),
        Input(ids.BOARD_WINDOW, "data"),
    )
    def render(model, instances, hosts, gpus, refresh, state):
        state = {**state, "model": model}
        view = BoardView(
            model, state["start"], state["end"], instances or [], hosts or [], gpus or []
        )
        try:
            data = load_board(context.client, view, max_points=context.settings.max_points)
        except ApiError as exc:
            return no_update, no_update, f"The service did not answer: {exc.message}"
        fig = board_figure(
            data.panels,
            window=(state["start"], state["end"]),
            changes=data.changes,
            breaches=data.breaches,
            thresholds=data.thresholds,
            revision=model or "board",
        )
        status = (
            f"{fmt(state['start'])} → {fmt(state['end'])} · {len(data.changes)} changes · "
            f"{len(data.breaches)} SLA breaches · {data.points:,} points drawn "
            f"(fetched in {data.seconds:.2f} s) · drag on a panel to zoom, double-click to reset"
        )
        return fig, view_url(state, instances, hosts, gpus, refresh), status

    @app.callback(
        Output(ids.BOARD_INTERVAL, "disabled"),
        Input(ids.BOARD_REFRESH, "value"),
    )
    def toggle_refresh(value):
        return "on" not in (value or [])

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
        instances, hosts = model_scope(context.client.topology(), model or "")
        return instances, hosts, [], []
