"""On-call: weekly rotations per team, overrides, and who is on call for a model now."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query
from pydantic import Field, model_validator

from correlator.api.auth import ReaderDep, WriterDep
from correlator.api.deps import EngineDep
from correlator.api.process_io import (
    Author,
    Body,
    Seconds,
    Text200,
    field_error,
    now,
    read,
    who,
    write,
)
from correlator.store.oncall import (
    RotationExists,
    add_override,
    add_rotation,
    list_overrides,
    list_rotations,
    who_is_on_call,
)

router = APIRouter(tags=["oncall"])
Team = Literal["algo", "infra"]


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


@router.get("/api/v1/oncall")
async def oncall(
    engine: EngineDep,
    _reader: ReaderDep,
    model: str = Query("", max_length=200, pattern=r"^[^\x00]*$"),
    at: float | None = Query(None, ge=0, le=1e11),
) -> dict:
    """Return the algo and infra contacts on call for a model at a time (default now)."""
    return await read(engine, who_is_on_call, model=model, at=now() if at is None else at)


@router.get("/api/v1/oncall/rotations")
async def rotations(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every rotation."""
    return await read(engine, list_rotations)


@router.post("/api/v1/oncall/rotations", status_code=201)
async def create_rotation(body: RotationIn, engine: EngineDep, token: WriterDep) -> dict:
    """Add a rotation; 409 when the name is taken."""
    fields = body.model_dump() | {"author": who(body.author, token)}
    try:
        return await write(engine, add_rotation, rotation=fields)
    except RotationExists as exc:
        raise field_error("name", f"a rotation named {exc} exists", 409) from exc


@router.get("/api/v1/oncall/overrides")
async def overrides(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every override."""
    return await read(engine, list_overrides)


@router.post("/api/v1/oncall/overrides", status_code=201)
async def create_override(body: OverrideIn, engine: EngineDep, token: WriterDep) -> dict:
    """Add an override."""
    fields = body.model_dump() | {"author": who(body.author, token)}
    return await write(engine, add_override, override=fields)
