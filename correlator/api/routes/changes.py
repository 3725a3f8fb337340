"""The change calendar: register planned and done changes, update and query them."""

from __future__ import annotations

from fastapi import APIRouter, Query

from correlator.api.auth import ReaderDep, WriterDep
from correlator.api.deps import EngineDep
from correlator.api.handlers import Name, field_error, not_found, now, read, who, write
from correlator.api.schemas.changes import ChangeIn, ChangeOut, ChangeUpdate
from correlator.limits import MAX_TS
from correlator.store.changes import (
    ChangeExists,
    add_change,
    get_change,
    query_changes,
    update_change,
)
from correlator.vocabulary import ChangeKind, Team

router = APIRouter(tags=["changes"])


@router.post(
    "/api/v1/changes", status_code=201, response_model=ChangeOut, response_model_exclude_unset=True
)
async def create_change(body: ChangeIn, engine: EngineDep, token: WriterDep) -> dict:
    """Register a change (planned ahead, or done); flags it unplanned when not a day ahead."""
    fields = body.model_dump(exclude_none=True) | {"author": who(body.author, token)}
    try:
        return await write(engine, add_change, change=fields, now=now())
    except ChangeExists as exc:
        raise field_error("id", f"a change with id {exc} exists", 409) from exc


@router.put(
    "/api/v1/changes/{change_id}", response_model=ChangeOut, response_model_exclude_unset=True
)
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


@router.get("/api/v1/changes", response_model=list[ChangeOut], response_model_exclude_unset=True)
async def changes(
    engine: EngineDep,
    _reader: ReaderDep,
    start: float | None = Query(None, ge=0, le=MAX_TS),
    end: float | None = Query(None, ge=0, le=MAX_TS),
    kind: ChangeKind | None = None,
    owner: Team | None = None,
    target: str | None = Query(None, max_length=200, pattern=r"^[^\x00]*$"),
) -> list[dict]:
    """Return changes in [start, end] (unix seconds; planned ones by planned time), oldest first."""
    return await read(
        engine, query_changes, start=start, end=end, kind=kind, owner=owner, target=target
    )


@router.get(
    "/api/v1/changes/{change_id}", response_model=ChangeOut, response_model_exclude_unset=True
)
async def change(change_id: Name, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return one change."""
    got = await read(engine, get_change, change_id=change_id)
    if got is None:
        raise not_found(f"change {change_id}")
    return got
