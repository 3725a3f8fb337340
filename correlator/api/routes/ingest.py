"""POST /api/v1/ingest: columnar batches from agents, atomic and idempotent."""

from __future__ import annotations

import time

from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from collector.schema import Batch, BatchError, parse_batch
from correlator.api.auth import IngestDep
from correlator.api.body import read_json_body
from correlator.api.deps import EngineDep, SeriesCacheDep, SettingsDep
from correlator.api.schemas.ingest import BatchIn, IngestOut
from correlator.store.tsdb import store_batch

router = APIRouter(tags=["ingest"])


@router.post(
    "/api/v1/ingest",
    response_model=IngestOut,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": BatchIn.model_json_schema(ref_template="#/components/schemas/{model}")
                }
            },
        }
    },
    responses={
        401: {"description": "missing or invalid token; nothing stored"},
        413: {"description": "body too large; nothing stored"},
        422: {"description": "invalid batch; detail names the field; nothing stored"},
    },
)
async def ingest(
    request: Request,
    _writer: IngestDep,
    engine: EngineDep,
    settings: SettingsDep,
    cache: SeriesCacheDep,
) -> IngestOut:
    """Store a batch whole or not at all; resent samples are stored once."""

    def parse(doc: object) -> Batch:
        try:
            return parse_batch(doc, **settings.batch_bounds(time.time()))
        except BatchError as exc:
            raise HTTPException(422, {"field": exc.path, "reason": exc.reason}) from exc

    batch = await read_json_body(request, settings.max_body_bytes, parse)
    result = await run_in_threadpool(
        store_batch,
        engine=engine,
        batch=batch,
        cache=cache,
    )
    return IngestOut(
        series=result.series, samples=result.samples, inserted=result.inserted, events=result.events
    )
