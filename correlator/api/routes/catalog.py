"""Read endpoint for the service topology."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep
from correlator.store.catalog import read_topology

router = APIRouter(tags=["catalog"])


def _read(engine, fn, **kwargs):
    with engine.connect() as conn:
        return fn(conn=conn, **kwargs)


@router.get("/api/v1/topology")
async def topology(engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return the service graph."""
    return await run_in_threadpool(_read, engine, read_topology)
