"""Environment fingerprints of hosts and model instances."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query

from correlator.api.auth import IngestDep, ReaderDep
from correlator.api.deps import EngineDep
from correlator.api.handlers import read, write
from correlator.api.schemas.fingerprints import FingerprintIn, FingerprintOut, FingerprintStored
from correlator.limits import MAX_NAME
from correlator.store.fingerprints import add_fingerprint, latest_fingerprint, list_fingerprints

router = APIRouter(tags=["fingerprints"])
# A filter PostgreSQL can compare: NUL would fail in the driver (a 500), not match nothing.
Filter = Annotated[str | None, Query(max_length=MAX_NAME, pattern=r"^[^\x00]*$")]


@router.post(
    "/api/v1/fingerprints",
    status_code=201,
    response_model=FingerprintStored,
    response_model_exclude_unset=True,
)
async def post_fingerprint(body: FingerprintIn, engine: EngineDep, _writer: IngestDep) -> dict:
    """Store a host's fingerprint; an unchanged one is stored once."""

    stored = await write(
        engine,
        add_fingerprint,
        host=body.host,
        instance=body.instance or "",
        model=body.model or "",
        ts=body.ts or time.time(),
        body=body.fingerprint,
    )
    return {"stored": stored}


@router.get(
    "/api/v1/fingerprints", response_model=list[FingerprintOut], response_model_exclude_unset=True
)
async def get_fingerprints(
    engine: EngineDep, _reader: ReaderDep, host: Filter = None
) -> list[dict]:
    """List fingerprints, newest first."""

    return await read(engine, list_fingerprints, host=host)


@router.get(
    "/api/v1/fingerprints/latest", response_model=FingerprintOut, response_model_exclude_unset=True
)
async def get_latest(
    engine: EngineDep,
    _reader: ReaderDep,
    host: Annotated[str, Query(max_length=MAX_NAME, pattern=r"^[^\x00]*$")],
    instance: Filter = None,
    model: Filter = None,
) -> dict:
    """Return the newest fingerprint of a host; 404 when none is stored."""

    found = await read(engine, latest_fingerprint, host=host, instance=instance, model=model)
    if found is None:
        raise HTTPException(404, f"no fingerprint stored for host {host!r}")
    return found
