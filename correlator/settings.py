"""Settings of the causeline service, from arguments or CAUSELINE_* variables."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict

from collector.schema import MAX_BODY_BYTES, MAX_SERIES_PER_BATCH


class ServiceSettings(BaseSettings):
    """Service configuration; every field can be set as CAUSELINE_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="CAUSELINE_", extra="ignore")

    database_url: str | None = None
    bind_host: str = "127.0.0.1"
    max_body_bytes: int = MAX_BODY_BYTES
    max_series_per_batch: int = MAX_SERIES_PER_BATCH
    # "auto": reads are open when bound to loopback and need a token otherwise.
    read_auth: Literal["auto", "open", "token"] = "auto"
    token_cache_seconds: float = 30.0

    def reads_need_token(self) -> bool:
        """Return whether read endpoints require a bearer token."""
        if self.read_auth != "auto":
            return self.read_auth == "token"
        return not is_loopback(self.bind_host)


def is_loopback(host: str) -> bool:
    """Return whether a bind address is loopback-only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
