"""Environment fingerprint bodies: as the agent sends one, and as stored."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from correlator.api.handlers import Body
from correlator.api.schemas.base import Out
from correlator.limits import MAX_TS


class FingerprintIn(Body):
    """A fingerprint as the agent sends it."""

    host: str = Field(min_length=1, max_length=200)
    instance: str | None = Field(default=None, max_length=200)
    model: str | None = Field(default=None, max_length=200)
    ts: float | None = Field(
        default=None, ge=0, le=MAX_TS, allow_inf_nan=False, description="unix seconds; default now"
    )
    fingerprint: dict[str, Any]


class FingerprintStored(Out):
    """Whether the fingerprint was new (an unchanged one is stored once)."""

    stored: bool


class FingerprintOut(Out):
    """A stored fingerprint."""

    id: int
    host: str
    instance: str | None
    model: str | None
    ts: float = Field(description="unix seconds")
    digest: str = Field(description="SHA-256 of the fingerprint")
    fingerprint: dict[str, Any]
