"""Read endpoint for the service topology."""

from __future__ import annotations

from fastapi import APIRouter

from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep
from correlator.api.handlers import read
from correlator.api.schemas.topology import TopologyOut
from correlator.store.topology import read_topology

router = APIRouter(tags=["catalog"])


@router.get("/api/v1/topology", response_model=TopologyOut, response_model_exclude_unset=True)
async def topology(engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return the service graph."""
    return await read(engine, read_topology)
