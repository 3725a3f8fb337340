"""The change calendar: register planned and done changes, update and query them."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query
from pydantic import Field

from correlator.api.auth import ReaderDep, WriterDep
from correlator.api.deps import EngineDep
from correlator.api.process_io import (
    Author,
    Body,
    Name,
    Seconds,
    Text200,
    field_error,
    not_found,
    now,
    read,
    who,
    write,
)
from correlator.store.changes import (
    ChangeExists,
    add_change,
    get_change,
    query_changes,
    update_change,
)

router = APIRouter(tags=["changes"])
Kind = Literal["deploy", "config", "feature", "image", "capacity", "infra"]
Team = Literal["algo", "infra"]
Stage = Literal["offline_eval", "shadow", "canary", "full", "rollback"]


class ChangeFields(Body):
    """Fields of a change shared by create and update."""

    person: Text200 | None = None
    target: Text200 | None = Field(None, examples=["model:click_rank_v3"])
    summary: str | None = Field(None, max_length=10_000)
    labels: dict[str, Text200] | None = None
    scope: str | None = Field(None, max_length=2000, description="impact scope in words")
    planned_ts: Seconds | None = Field(None, description="when it is planned (unix seconds)")
    ts: Seconds | None = Field(None, description="when it happened; null while planned")
    rollout_stage: Stage | None = None
    canary_percent: float | None = Field(None, ge=0, le=100)
    version: str | None = Field(None, max_length=100)
    author: Author = None


class ChangeIn(ChangeFields):
    """A new change; kind and owner team are required."""

    id: str | None = Field(None, min_length=1, max_length=200, pattern=r"^[^\x00/]+$")
    kind: Kind
    owner: Team


class ChangeUpdate(ChangeFields):
    """A partial update of a change."""

    kind: Kind | None = None
    owner: Team | None = None


@router.post("/api/v1/changes", status_code=201)
async def create_change(body: ChangeIn, engine: EngineDep, token: WriterDep) -> dict:
    """Register a change (planned ahead, or done); flags it unplanned when not a day ahead."""
    fields = body.model_dump(exclude_none=True) | {"author": who(body.author, token)}
    try:
        return await write(engine, add_change, change=fields, now=now())
    except ChangeExists as exc:
        raise field_error("id", f"a change with id {exc} exists", 409) from exc


@router.put("/api/v1/changes/{change_id}")
async def put_change(
    change_id: Name, body: ChangeUpdate, engine: EngineDep, token: WriterDep
) -> dict:
    """Update fields of a change (e.g. set ts when it happened, or the rollout stage)."""
    fields = body.model_dump(exclude_unset=True) | {"author": who(body.author, token)}
    for key in ("kind", "owner"):
        if key in fields and fields[key] is None:
            raise field_error(key, "must not be null")
    got = await write(engine, update_change, change_id=change_id, fields=fields)
    if got is None:
        raise not_found(f"change {change_id}")
    return got


@router.get("/api/v1/changes")
async def changes(
    engine: EngineDep,
    _reader: ReaderDep,
    start: float | None = Query(None, ge=0, le=1e11),
    end: float | None = Query(None, ge=0, le=1e11),
    kind: Kind | None = None,
    owner: Team | None = None,
    target: str | None = Query(None, max_length=200, pattern=r"^[^\x00]*$"),
) -> list[dict]:
    """Return changes in [start, end] (unix seconds; planned ones by planned time), oldest first."""
    return await read(
        engine, query_changes, start=start, end=end, kind=kind, owner=owner, target=target
    )


@router.get("/api/v1/changes/{change_id}")
async def change(change_id: Name, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return one change."""
    got = await read(engine, get_change, change_id=change_id)
    if got is None:
        raise not_found(f"change {change_id}")
    return got
