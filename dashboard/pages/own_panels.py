"""The board's own panels: add one from a selector, keep it per model or service, share it."""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from dashboard import ids, urlquery
from dashboard.kept_panels import add, forget, keep_key, restore


def controls(panels: list[str]) -> html.Div:
    """Return the controls to add a panel from a selector, and the list of one's panels."""
    return html.Div(
        [
            html.Label(
                [
                    "Add a panel: series selector",
                    dcc.Input(
                        id=ids.BOARD_PANEL_SELECTOR,
                        type="text",
                        placeholder='metric{label="value"}',
                        debounce=False,
                        style={"minWidth": "320px"},
                    ),
                ],
                className="control",
            ),
            html.Label(
                ["name", dcc.Input(id=ids.BOARD_PANEL_NAME, type="text", placeholder="optional")],
                className="control",
            ),
            dcc.Checklist(
                id=ids.BOARD_PANEL_KEEP,
                options=[{"label": " keep for this model / service", "value": "keep"}],
                value=["keep"],
            ),
            html.Button("Add panel", id=ids.BOARD_PANEL_ADD, n_clicks=0),
            html.Span(id=ids.BOARD_PANEL_MSG, className="msg"),
            html.Label(
                [
                    "Your panels",
                    dcc.Dropdown(id=ids.BOARD_PANELS, options=panels, value=panels, multi=True),
                ],
                className="control wide",
            ),
        ],
        className="controls",
    )


def register(app: dash.Dash) -> None:
    """Add a person's panels: add one, show those kept for the model or service, forget one."""

    @app.callback(
        Output(ids.BOARD_PANELS, "value"),
        Output(ids.BOARD_PANELS, "options"),
        Input(ids.BOARD_KEPT, "modified_timestamp"),
        Input(ids.BOARD_MODEL, "value"),
        Input(ids.BOARD_SERVICE, "value"),
        State(ids.BOARD_KEPT, "data"),
        State(ids.BOARD_PANELS, "value"),
    )
    def show_kept(_ts, model, services, kept, current):
        current = urlquery.listed(current)
        shown = restore(
            current,
            kept if isinstance(kept, dict) else {},
            keep_key(model, urlquery.listed(services)),
        )
        if shown == current:
            raise PreventUpdate
        return shown, shown

    @app.callback(
        Output(ids.BOARD_PANELS, "value", allow_duplicate=True),
        Output(ids.BOARD_PANELS, "options", allow_duplicate=True),
        Output(ids.BOARD_KEPT, "data"),
        Output(ids.BOARD_PANEL_MSG, "children"),
        Input(ids.BOARD_PANEL_ADD, "n_clicks"),
        Input(ids.BOARD_PANEL_SELECTOR, "n_submit"),
        State(ids.BOARD_PANEL_SELECTOR, "value"),
        State(ids.BOARD_PANEL_NAME, "value"),
        State(ids.BOARD_PANEL_KEEP, "value"),
        State(ids.BOARD_PANELS, "value"),
        State(ids.BOARD_KEPT, "data"),
        State(ids.BOARD_MODEL, "value"),
        State(ids.BOARD_SERVICE, "value"),
        prevent_initial_call=True,
    )
    def add_panel(_clicks, _submit, text, name, keep, current, kept, model, services):
        current = urlquery.listed(current)
        key = keep_key(model, urlquery.listed(services))
        kept = kept if isinstance(kept, dict) else {}
        shown, kept_now, message = add(current, kept, key, name, text, "keep" in (keep or []))
        if shown == current:
            return no_update, no_update, no_update, message
        return shown, shown, kept_now, message

    @app.callback(
        Output(ids.BOARD_KEPT, "data", allow_duplicate=True),
        Input(ids.BOARD_PANELS, "value"),
        State(ids.BOARD_KEPT, "data"),
        State(ids.BOARD_MODEL, "value"),
        State(ids.BOARD_SERVICE, "value"),
        prevent_initial_call=True,
    )
    def forget_removed(current, kept, model, services):
        left = forget(
            kept if isinstance(kept, dict) else {},
            keep_key(model, urlquery.listed(services)),
            urlquery.listed(current),
        )
        if left is None:
            raise PreventUpdate
        return left
