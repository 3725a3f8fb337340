"""What every page needs: the API client, the settings and the request's access."""

from __future__ import annotations

from dataclasses import dataclass

import flask

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
        headers = flask.request.headers if flask.has_request_context() else {}
        return resolve_access(
            headers=headers,
            bind_host=self.settings.bind_host,
            user_header=self.settings.user_header,
            has_token=self.client.has_token,
        )
