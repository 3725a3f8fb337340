"""The dashboard app factory: Dash Pages over the service's HTTP API."""

from __future__ import annotations

import re
from pathlib import Path

import dash
from dash import html

from dashboard import ids
from dashboard.client import ApiClient
from dashboard.context import Context
from dashboard.gate import install_gate, reader_token
from dashboard.pages import board, capacity, changes, incidents, metrics, models, oncall, slas
from dashboard.precompressed import install_precompressed
from dashboard.settings import DashboardSettings

ASSETS = Path(__file__).with_name("assets")
# Component bundles Dash always lists that no page uses: the tables are plain HTML.
UNUSED_SCRIPTS = re.compile(r'<script src="[^"]*/dash/dash_table/[^"]*"></script>\n?')
NAV = [
    ("Board", "/board"),
    ("Incidents", "/incidents"),
    ("Change calendar", "/changes"),
    ("Models", "/models"),
    ("SLAs", "/slas"),
    ("On call", "/oncall"),
    ("Metrics", "/metrics-browser"),
    ("Capacity", "/capacity"),
]


class CauselineDash(dash.Dash):
    """Dash, less the script tags of component bundles no page uses."""

    def _generate_scripts_html(self) -> str:
        return UNUSED_SCRIPTS.sub("", super()._generate_scripts_html())


def _shell(app: dash.Dash, context: Context) -> html.Div:
    access = context.access()
    if access.can_write:
        banner = html.Div(
            f"Signed in as {access.user}; writes are recorded under this name.",
            id=ids.BANNER,
            className="banner ok",
        )
    else:
        banner = html.Div(
            f"Read-only: {access.read_only_reason}.", id=ids.BANNER, className="banner readonly"
        )
    return html.Div(
        [
            html.Header(
                [
                    html.A("causeline", href=app.get_relative_path("/board"), className="brand"),
                    html.Nav(
                        [html.A(label, href=app.get_relative_path(path)) for label, path in NAV]
                    ),
                    banner,
                    *_sign_out(app),
                ]
            ),
            html.Main(dash.page_container),
        ]
    )


def _sign_out(app: dash.Dash) -> list:
    if not reader_token():
        return []
    button = html.Button("Sign out", type="submit", className="signout")
    return [html.Form([button], method="post", action=app.get_relative_path("/logout"))]


def create_dashboard(
    settings: DashboardSettings | None = None,
    *,
    api_client: ApiClient | None = None,
    server=True,
) -> dash.Dash:
    """Return the Dash app; pages talk to the service only through the API client."""
    settings = settings or DashboardSettings()
    client = api_client or ApiClient(
        settings.api_url, token=settings.api_token, timeout=settings.api_timeout_seconds
    )
    client.reader_token = reader_token
    prefix = "/" + settings.url_prefix.strip("/") + "/" if settings.url_prefix.strip("/") else "/"
    app = CauselineDash(
        "causeline",
        server=server,
        use_pages=True,
        pages_folder="",
        assets_folder=str(ASSETS),
        requests_pathname_prefix=prefix,
        routes_pathname_prefix=prefix,
        title="causeline",
        suppress_callback_exceptions=True,
    )
    context = Context(client, settings, prefix)
    for page in (board, incidents, changes, models, slas, oncall, metrics, capacity):
        page.register(app, context)
    board.register_filters(app, context)
    app.layout = lambda: _shell(app, context)
    install_gate(app, context)
    install_precompressed(app.server, ASSETS, prefix)
    app.server.config["causeline_context"] = context
    return app
