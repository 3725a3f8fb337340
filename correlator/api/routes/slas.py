"""SLAs: the written SLA document and the thresholds the evaluator checks."""

from __future__ import annotations

from fastapi import APIRouter, Response

from correlator.api.auth import AdminDep, ReaderDep, WriterDep
from correlator.api.deps import EngineDep
from correlator.api.handlers import Name, field_error, not_found, read, who, write
from correlator.api.schemas.slas import SlaBase, SlaIn, SlaOut, SlaPut
from correlator.store.slas import delete_sla as remove_sla
from correlator.store.slas import get_sla, list_slas, save_sla

router = APIRouter(tags=["slas"])


def _fields(body: SlaBase, token: str) -> dict:
    return body.model_dump(exclude_none=True) | {"author": who(body.author, token)}


@router.get("/api/v1/slas", response_model=list[SlaOut], response_model_exclude_unset=True)
async def slas(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every SLA."""
    return await read(engine, list_slas)


@router.post(
    "/api/v1/slas", status_code=201, response_model=SlaOut, response_model_exclude_unset=True
)
async def create_sla(body: SlaIn, engine: EngineDep, token: WriterDep) -> dict:
    """Add an SLA; 409 when the name is taken."""
    got = await write(engine, save_sla, sla=_fields(body, token), replace=False)
    if got is None:
        raise field_error("name", f"an SLA named {body.name!r} exists", 409)
    return got


@router.get("/api/v1/slas/{name}", response_model=SlaOut, response_model_exclude_unset=True)
async def sla(name: Name, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return one SLA."""
    got = await read(engine, get_sla, name=name)
    if got is None:
        raise not_found(f"SLA {name}")
    return got


@router.put("/api/v1/slas/{name}", response_model=SlaOut, response_model_exclude_unset=True)
async def put_sla(name: Name, body: SlaPut, engine: EngineDep, token: WriterDep) -> dict:
    """Create or replace the SLA of that name."""
    if body.name is not None and body.name != name:
        raise field_error("name", f"must match the path ({name!r}) or be left out")
    return await write(engine, save_sla, sla=_fields(body, token) | {"name": name})


@router.delete("/api/v1/slas/{name}", status_code=204)
async def delete_sla(name: Name, engine: EngineDep, _admin: AdminDep) -> Response:
    """Delete an SLA (its incidents stay)."""
    if not await write(engine, remove_sla, name=name):
        raise not_found(f"SLA {name}")
    return Response(status_code=204)
