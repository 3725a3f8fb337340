"""On-call: weekly rotations per team, overrides, and who is on call for a model now."""

from __future__ import annotations

from fastapi import APIRouter, Query

from correlator.api.auth import ReaderDep, WriterDep
from correlator.api.deps import EngineDep
from correlator.api.handlers import field_error, now, read, who, write
from correlator.api.schemas.oncall import (
    OnCallOut,
    OverrideIn,
    OverrideOut,
    RotationIn,
    RotationOut,
)
from correlator.limits import MAX_TS
from correlator.store.oncall import (
    RotationExists,
    add_override,
    add_rotation,
    list_overrides,
    list_rotations,
    who_is_on_call,
)

router = APIRouter(tags=["oncall"])


@router.get("/api/v1/oncall", response_model=OnCallOut, response_model_exclude_unset=True)
async def oncall(
    engine: EngineDep,
    _reader: ReaderDep,
    model: str = Query("", max_length=200, pattern=r"^[^\x00]*$"),
    at: float | None = Query(None, ge=0, le=MAX_TS),
) -> dict:
    """Return the algo and infra contacts on call for a model at a time (default now)."""
    return await read(engine, who_is_on_call, model=model, at=now() if at is None else at)


@router.get(
    "/api/v1/oncall/rotations", response_model=list[RotationOut], response_model_exclude_unset=True
)
async def rotations(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every rotation."""
    return await read(engine, list_rotations)


@router.post(
    "/api/v1/oncall/rotations",
    status_code=201,
    response_model=RotationOut,
    response_model_exclude_unset=True,
)
async def create_rotation(body: RotationIn, engine: EngineDep, token: WriterDep) -> dict:
    """Add a rotation; 409 when the name is taken."""
    fields = body.model_dump() | {"author": who(body.author, token)}
    try:
        return await write(engine, add_rotation, rotation=fields)
    except RotationExists as exc:
        raise field_error("name", f"a rotation named {exc} exists", 409) from exc


@router.get(
    "/api/v1/oncall/overrides", response_model=list[OverrideOut], response_model_exclude_unset=True
)
async def overrides(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every override."""
    return await read(engine, list_overrides)


@router.post(
    "/api/v1/oncall/overrides",
    status_code=201,
    response_model=OverrideOut,
    response_model_exclude_unset=True,
)
async def create_override(body: OverrideIn, engine: EngineDep, token: WriterDep) -> dict:
    """Add an override."""
    fields = body.model_dump() | {"author": who(body.author, token)}
    return await write(engine, add_override, override=fields)
