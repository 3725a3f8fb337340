"""SLAs: the written SLA document and the thresholds the evaluator checks."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Response
from pydantic import Field, model_validator

from correlator.api.auth import AdminDep, ReaderDep, WriterDep
from correlator.api.deps import EngineDep
from correlator.api.process_io import (
    Author,
    Body,
    Name,
    Seconds,
    Text200,
    field_error,
    not_found,
    read,
    who,
    write,
)
from correlator.store.catalog import delete_sla as remove_sla
from correlator.store.catalog import get_sla, list_slas, upsert_sla

router = APIRouter(tags=["slas"])


class SlaFields(Body):
    """An SLA as in FORMAT.md, plus severity, the written document and its model."""

    metric: str = Field(min_length=1, max_length=200, examples=["model_latency_p99_ms"])
    labels: dict[str, Text200] = Field(default_factory=dict)
    aggregate: Literal["max", "min", "mean", "sum"] = "max"
    op: Literal[">", "<"] | None = None
    threshold: float | None = Field(None, ge=-1e15, le=1e15)
    for_seconds: float = Field(0, ge=0, le=1e7)
    breach_start: Seconds | None = None
    severity: Literal["critical", "major", "minor", "info"] = "major"
    description: str = Field("", max_length=100_000, description="the SLA document (Markdown)")
    model: Text200 | None = None
    author: Author = None

    @model_validator(mode="after")
    def _op_and_threshold(self):
        if (self.op is None) != (self.threshold is None):
            missing = "threshold" if self.threshold is None else "op"
            raise ValueError(
                f"{missing} is required with {'op' if missing == 'threshold' else 'threshold'}"
            )
        return self


class SlaIn(SlaFields):
    """A new SLA."""

    name: str = Field(min_length=1, max_length=200, pattern=r"^[^\x00/]+$")


class SlaPut(SlaFields):
    """An SLA replacing the one named in the path (the name may be repeated)."""

    name: str | None = Field(None, max_length=200)


def _store(*, conn, sla: dict) -> dict:
    upsert_sla(conn=conn, sla=sla)
    return get_sla(conn=conn, name=sla["name"])


def _create(*, conn, sla: dict) -> dict | None:
    if get_sla(conn=conn, name=sla["name"]) is not None:
        return None
    return _store(conn=conn, sla=sla)


def _fields(body: SlaFields, token: str) -> dict:
    out = body.model_dump(exclude_none=True) | {"author": who(body.author, token)}
    if not out.get("model") and body.labels.get("model"):
        out["model"] = body.labels["model"]
    return out


@router.get("/api/v1/slas")
async def slas(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every SLA."""
    return await read(engine, list_slas)


@router.post("/api/v1/slas", status_code=201)
async def create_sla(body: SlaIn, engine: EngineDep, token: WriterDep) -> dict:
    """Add an SLA; 409 when the name is taken."""
    got = await write(engine, _create, sla=_fields(body, token))
    if got is None:
        raise field_error("name", f"an SLA named {body.name!r} exists", 409)
    return got


@router.get("/api/v1/slas/{name}")
async def sla(name: Name, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return one SLA."""
    got = await read(engine, get_sla, name=name)
    if got is None:
        raise not_found(f"SLA {name}")
    return got


@router.put("/api/v1/slas/{name}")
async def put_sla(name: Name, body: SlaPut, engine: EngineDep, token: WriterDep) -> dict:
    """Create or replace the SLA of that name."""
    if body.name is not None and body.name != name:
        raise field_error("name", f"must match the path ({name!r}) or be left out")
    return await write(engine, _store, sla=_fields(body, token) | {"name": name})


@router.delete("/api/v1/slas/{name}", status_code=204)
async def delete_sla(name: Name, engine: EngineDep, _admin: AdminDep) -> Response:
    """Delete an SLA (its incidents stay)."""
    if not await write(engine, remove_sla, name=name):
        raise not_found(f"SLA {name}")
    return Response(status_code=204)
