"""Service bodies: liveness, readiness and who a token is."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from correlator.api.schemas.base import Out


class HealthOut(Out):
    """The process serves requests."""

    status: Literal["ok"]


class ReadyOut(HealthOut):
    """The database answers and has a schema."""

    revision: str = Field(description="the schema's migration revision")


class WhoAmIOut(Out):
    """The name of the request's token."""

    name: str
