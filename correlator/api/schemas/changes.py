"""Change calendar bodies: the fields of a change, a new one, an update, the stored form."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from correlator.api.handlers import Author, Body
from correlator.api.schemas.base import Labels, Number, Ordered
from correlator.limits import MAX_NAME, MAX_SUMMARY, NAME_PATTERN, Seconds, Text200
from correlator.vocabulary import ChangeKind, RolloutStage, Team


class ChangeBase(Body):
    """Fields of a change shared by create and update."""

    person: Text200 | None = None
    target: Text200 | None = Field(None, examples=["model:click_rank_v3"])
    summary: str | None = Field(None, max_length=MAX_SUMMARY)
    labels: dict[str, Text200] | None = None
    scope: str | None = Field(None, max_length=2000, description="impact scope in words")
    planned_ts: Seconds | None = Field(None, description="when it is planned (unix seconds)")
    ts: Seconds | None = Field(None, description="when it happened; null while planned")
    rollout_stage: RolloutStage | None = None
    canary_percent: float | None = Field(None, ge=0, le=100)
    version: str | None = Field(None, max_length=100)
    author: Author = None


class ChangeIn(ChangeBase):
    """A new change; kind and owner team are required."""

    id: str | None = Field(None, min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)
    kind: ChangeKind
    owner: Team


class ChangeUpdate(ChangeBase):
    """A partial update of a change."""

    kind: ChangeKind | None = None
    owner: Team | None = None


class ChangeOut(Ordered):
    """A stored change with its status and unplanned flag; outside facts (url, pipeline) stay."""

    id: str
    ts: Number | None = Field(description="when it happened (unix seconds); null while planned")
    kind: str
    target: str
    summary: str
    owner: str
    labels: Labels
    person: str | None
    scope: str | None
    rollout_stage: str | None
    canary_percent: Number | None
    version: str | None
    author: str | None
    planned_ts: Number | None = Field(description="when it is planned (unix seconds)")
    registered_at: Number | None = Field(description="when it was registered (unix seconds)")
    status: Literal["planned", "done"]
    unplanned: bool = Field(description="done without being registered a day ahead")
