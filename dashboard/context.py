"""What every page needs: the API client, the settings and the request's access."""

from __future__ import annotations

from dataclasses import dataclass

import flask
from werkzeug.datastructures import Headers

from dashboard.access import Access, resolve_access
from dashboard.client import ApiClient
from dashboard.settings import DashboardSettings


@dataclass(slots=True)
class Context:
    """Shared by the pages of one dashboard app."""

    client: ApiClient
    settings: DashboardSettings
    prefix: str = "/"

    def path(self, path: str) -> str:
        """Return a dashboard path under the mount prefix."""
        return self.prefix.rstrip("/") + path

    def access(self) -> Access:
        """Return who makes the current request and whether they may write."""
        headers: Headers | dict[str, str] = (
            flask.request.headers if flask.has_request_context() else {}
        )
        return resolve_access(
            headers=headers,
            bind_host=self.settings.bind_host,
            user_header=self.settings.user_header,
            has_token=self.client.has_token,
        )


def serving(fallback: Context) -> Context:
    """Return the context of the app serving this request, else ``fallback``.

    Dash keeps one page registry per process, so a page's layout registered by one app is
    also what another app in the same process renders; each app keeps its own context in
    its Flask config, and a layout asks for the one of the request it answers.
    """
    if flask.has_app_context():
        return flask.current_app.config.get("causeline_context", fallback)
    return fallback
