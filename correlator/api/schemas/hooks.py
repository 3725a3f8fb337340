"""Deploy hook body: a rollout step as a CI/CD pipeline reports it (answered with the change)."""

from __future__ import annotations

from pydantic import Field

from correlator.api.handlers import Author, Body
from correlator.limits import MAX_NAME, MAX_SUMMARY, NAME_PATTERN, Seconds, Text200
from correlator.vocabulary import RolloutStage, Team


class DeployHook(Body):
    """A deploy step as a CI/CD pipeline reports it."""

    model: Text200 = Field(min_length=1, pattern=r"^[^\x00/]+$")
    version: str = Field(min_length=1, max_length=100)
    stage: RolloutStage = "full"
    canary_percent: float | None = Field(None, ge=0, le=100)
    person: Text200 | None = None
    owner: Team = "algo"
    pipeline: Text200 | None = Field(None, description="pipeline run, e.g. gitlab#4411")
    url: str | None = Field(None, max_length=2000)
    summary: str | None = Field(None, max_length=MAX_SUMMARY)
    ts: Seconds | None = Field(None, description="when it happened; default now")
    planned_ts: Seconds | None = None
    instance: Text200 | None = None
    id: str | None = Field(None, min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)
    author: Author = None
