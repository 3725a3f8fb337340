"""Settings of the dashboard, from arguments or CAUSELINE_DASHBOARD_* variables."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PositiveInt
from pydantic_settings import BaseSettings, SettingsConfigDict

from dashboard.access import is_loopback


class DashboardSettings(BaseSettings):
    """Dashboard configuration; every field can be set as CAUSELINE_DASHBOARD_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="CAUSELINE_DASHBOARD_", extra="ignore")

    api_url: str = "http://127.0.0.1:8400"
    # Bearer token the dashboard writes with; the person is sent as "author".
    api_token: str | None = None
    bind_host: str = "127.0.0.1"
    # "auto": pages and callbacks are open on a loopback bind and need a sign-in otherwise
    # (a reader token, or the user header from a trusted auth proxy); "token" or "open".
    read_auth: Literal["auto", "open", "token"] = "auto"
    # Host names answered besides loopback and the bind address (comma-separated; "*": any).
    allowed_hosts: str | None = None
    # Trusted auth-proxy header naming the person, e.g. X-Forwarded-User (oauth2-proxy).
    user_header: str | None = None
    # Where the dashboard is mounted, e.g. "/" or "/dash/".
    url_prefix: str = "/"
    # Points per trace sent to the browser; more detail is fetched on zoom.
    max_points: PositiveInt = 600
    api_timeout_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 30.0
    # Largest request body taken (a callback's JSON, the sign-in form): 413 past it.
    max_body_bytes: PositiveInt = 4 * 1024 * 1024

    def reads_need_sign_in(self) -> bool:
        """Return whether pages and callbacks need a signed-in reader."""
        if self.read_auth != "auto":
            return self.read_auth == "token"
        return not is_loopback(self.bind_host)
