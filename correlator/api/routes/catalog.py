"""Read endpoints for the change calendar, topology and SLAs."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep
from correlator.store.catalog import list_changes, list_slas, read_topology

router = APIRouter(tags=["catalog"])


def _read(engine, fn, **kwargs):
    with engine.connect() as conn:
        return fn(conn=conn, **kwargs)


@router.get("/api/v1/changes")
async def changes(
    engine: EngineDep, _reader: ReaderDep, start: float | None = None, end: float | None = None
) -> list[dict]:
    """Return change events in [start, end] (unix seconds), oldest first."""
    return await run_in_threadpool(_read, engine, list_changes, start=start, end=end)


@router.get("/api/v1/topology")
async def topology(engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return the service graph."""
    return await run_in_threadpool(_read, engine, read_topology)


@router.get("/api/v1/slas")
async def slas(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every SLA."""
    return await run_in_threadpool(_read, engine, list_slas)
