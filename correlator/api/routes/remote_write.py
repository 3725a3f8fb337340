"""POST /api/v1/write: Prometheus remote write 1.0 (snappy-compressed protobuf) into the store."""

from __future__ import annotations

import time

from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from collector.schema import BatchError
from correlator.api.auth import IngestDep
from correlator.api.deps import EngineDep, SeriesCacheDep, SettingsDep
from correlator.api.schemas.ingest import WriteOut
from correlator.api.wire_body import inflate, read_bytes
from correlator.receivers.compression import BadEncoding, TooLarge, Unsupported
from correlator.receivers.remote_write import decode_write_request
from correlator.store.tsdb import store_batch

router = APIRouter(tags=["ingest"])
PROTOBUF = "application/x-protobuf"
# Remote write 2.0 names its message in the Content-Type; 1.0 names none or this one.
V1_MESSAGES = frozenset({"", "prometheus.WriteRequest"})


def check_content_type(value: str) -> None:
    """Refuse (Unsupported) anything but a remote-write 1.0 protobuf body."""
    media, _, params = value.partition(";")
    if media.strip().lower() not in ("", PROTOBUF):
        raise Unsupported(f"Content-Type must be {PROTOBUF}, got {media.strip()[:80]!r}")
    proto = dict(p.strip().partition("=")[::2] for p in params.split(";") if p.strip()).get(
        "proto", ""
    )
    if proto not in V1_MESSAGES:
        raise Unsupported(
            f"remote write message {proto[:80]!r} is not supported: send remote write 1.0 "
            "(protobuf_message: prometheus.WriteRequest in prometheus.yml)"
        )


@router.post(
    "/api/v1/write",
    response_model=WriteOut,
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "a snappy-compressed (block format) prometheus.WriteRequest",
            "content": {PROTOBUF: {"schema": {"type": "string", "format": "binary"}}},
        }
    },
    responses={
        400: {"description": "not snappy, not a WriteRequest, or a bad series; nothing stored"},
        401: {"description": "missing or invalid token; nothing stored"},
        403: {"description": "the token lacks the ingest scope; nothing stored"},
        413: {"description": "body too large, compressed or inflated; nothing stored"},
        415: {"description": "not remote write 1.0 (Content-Type, Content-Encoding)"},
    },
)
async def remote_write(
    request: Request,
    _writer: IngestDep,
    engine: EngineDep,
    settings: SettingsDep,
    cache: SeriesCacheDep,
) -> WriteOut:
    """Store a remote-write request whole or not at all; resent samples are stored once."""
    limit = settings.max_body_bytes
    try:
        check_content_type(request.headers.get("content-type", ""))
        raw = await read_bytes(request, limit)
        # Remote write 1.0 bodies are always snappy: a missing header means the same.
        body = inflate(
            raw,
            request.headers.get("content-encoding") or "snappy",
            limit,
            allowed=frozenset({"snappy"}),
        )
        decoded = await run_in_threadpool(
            decode_write_request,
            body,
            **settings.batch_bounds(time.time()),
        )
    except TooLarge as exc:
        raise HTTPException(413, {"field": "body", "reason": str(exc)}) from exc
    except Unsupported as exc:
        raise HTTPException(415, {"field": "headers", "reason": str(exc)}) from exc
    except BadEncoding as exc:
        raise HTTPException(400, {"field": "body", "reason": str(exc)}) from exc
    except BatchError as exc:
        raise HTTPException(400, {"field": exc.path, "reason": exc.reason}) from exc
    if not decoded.batch.series and not decoded.markers:  # metadata only
        return WriteOut(
            series=0,
            samples=0,
            inserted=0,
            stale_markers=decoded.stale,
            non_finite=decoded.non_finite,
            native_histograms=decoded.histograms,
        )
    result = await run_in_threadpool(
        store_batch,
        engine=engine,
        batch=decoded.batch,
        cache=cache,
        markers=decoded.markers,
    )
    return WriteOut(
        series=result.series,
        samples=result.samples,
        inserted=result.inserted,
        stale_markers=decoded.stale,
        non_finite=decoded.non_finite,
        native_histograms=decoded.histograms,
    )
