"""On-call bodies: rotations, overrides and who of each team is on call."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from correlator.api.handlers import Author, Body
from correlator.api.schemas.base import Number, Out
from correlator.limits import Seconds, Text200
from correlator.vocabulary import Team


class Member(Body):
    """A person of a rotation and how to reach them."""

    name: str = Field(min_length=1, max_length=200)
    contact: Text200 = ""


class RotationIn(Body):
    """A rotation: week n after start is held by members[n % len(members)]."""

    name: str = Field(min_length=1, max_length=200)
    team: Team
    model: Text200 = Field("", description="empty: every model")
    members: list[Member | Text200] = Field(min_length=1, max_length=200)
    start: Seconds
    period_days: float = Field(7, gt=0, le=3650)
    author: Author = None


class RotationOut(Out):
    """A stored rotation."""

    id: int
    name: str
    team: str
    model: str = Field(description="empty: every model")
    members: list[Any] = Field(description="names, or {name, contact} objects, as given")
    start: Number = Field(description="unix seconds")
    period_days: Number
    author: str


class OverrideIn(Body):
    """A person on call in place of the rotation in [start, end)."""

    team: Team
    model: Text200 = ""
    person: str = Field(min_length=1, max_length=200)
    contact: Text200 = ""
    start: Seconds
    end: Seconds
    reason: str = Field("", max_length=2000)
    author: Author = None

    @model_validator(mode="after")
    def _ordered(self):
        if self.end <= self.start:
            raise ValueError("end must be after start")
        return self


class OverrideOut(Out):
    """A stored override."""

    id: int
    team: str
    model: str
    person: str
    contact: str
    start: Number = Field(description="unix seconds")
    end: Number = Field(description="unix seconds")
    reason: str
    author: str


class OnCall(Out):
    """Who of a team is on call: from an override (with its reason) or a rotation (its name)."""

    person: str
    contact: Any = Field(description="how to reach them")
    source: Literal["override", "rotation"]
    rotation: str | None = Field(None, description="the rotation's name")
    until: Number = Field(description="unix seconds")
    reason: str | None = Field(None, description="an override's reason")


class OnCallPair(Out):
    """Who of each team is on call; null where nobody is."""

    algo: OnCall | None
    infra: OnCall | None


class OnCallOut(Out):
    """Who of each team is on call for a model at a time; null where nobody is."""

    model: str = Field(description="empty: any model")
    at: Number = Field(description="unix seconds")
    algo: OnCall | None
    infra: OnCall | None
