"""POST /v1/metrics: OTLP/HTTP metrics (protobuf or JSON, optionally gzip) into the store."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from fastapi import APIRouter, HTTPException, Request, Response
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceResponse,
)
from starlette.concurrency import run_in_threadpool

from collector.schema import BatchError
from correlator.api.auth import require_ingest
from correlator.api.deps import EngineDep, SeriesCacheDep, SettingsDep
from correlator.api.wire_body import inflate, read_bytes
from correlator.receivers.compression import BadEncoding, TooLarge, Unsupported
from correlator.receivers.otlp import Decoded, decode_metrics, parse_request
from correlator.store.tsdb import DeltaOverflow, store_batch

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


router = APIRouter(tags=["ingest"])
PROTOBUF, JSON = "application/x-protobuf", "application/json"
INVALID_ARGUMENT, PERMISSION_DENIED, UNAUTHENTICATED = 3, 7, 16  # google.rpc.Code
_CODES = {401: UNAUTHENTICATED, 403: PERMISSION_DENIED}


def _reply(message, status: int, is_json: bool, headers: dict | None = None) -> Response:
    """Return a message in the request's encoding, as OTLP/HTTP answers."""
    if is_json:
        body = json_format.MessageToJson(message, indent=None).encode()
        return Response(body, status, headers=headers, media_type=JSON)
    return Response(message.SerializeToString(), status, headers=headers, media_type=PROTOBUF)


def _error(status: int, field: str, reason: str, is_json: bool, headers=None) -> Response:
    code = _CODES.get(status, INVALID_ARGUMENT)
    return _reply(Status(code=code, message=f"{field}: {reason}"), status, is_json, headers)


def _decode(body: bytes, is_json: bool, settings: ServiceSettings) -> Decoded:
    return decode_metrics(
        parse_request(body, is_json=is_json), **settings.batch_bounds(time.time())
    )


@router.post(
    "/v1/metrics",
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "an OTLP ExportMetricsServiceRequest; Content-Encoding: gzip allowed",
            "content": {
                PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
                JSON: {"schema": {"type": "object", "description": "OTLP/JSON"}},
            },
        }
    },
    responses={
        200: {
            "description": "ExportMetricsServiceResponse (partialSuccess counts points refused)",
            "content": {PROTOBUF: {}, JSON: {}},
        },
        400: {
            "description": "not OTLP, or a bad metric or point, or a delta that would take "
            "a stored total past float64's range (google.rpc.Status body)"
        },
        401: {"description": "missing or invalid token; nothing stored"},
        403: {"description": "the token lacks the ingest scope; nothing stored"},
        413: {"description": "body too large, compressed or inflated; nothing stored"},
        415: {"description": "Content-Type or Content-Encoding not accepted"},
    },
)
async def otlp_metrics(
    request: Request, engine: EngineDep, settings: SettingsDep, cache: SeriesCacheDep
) -> Response:
    """Store an OTLP metrics export whole or not at all; resent points are stored once."""
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    is_json = media == JSON
    try:
        await require_ingest(request)
    except HTTPException as exc:
        return _error(exc.status_code, "authorization", str(exc.detail), is_json, exc.headers)
    if media not in (PROTOBUF, JSON):
        return _error(415, "content-type", f"must be {PROTOBUF} or {JSON}", is_json)
    limit = settings.max_body_bytes
    try:
        raw = await read_bytes(request, limit)
        encoding = request.headers.get("content-encoding", "")
        body = inflate(raw, encoding, limit, allowed=frozenset({"gzip", "identity"}))
        decoded = await run_in_threadpool(_decode, body, is_json, settings)
    except TooLarge as exc:
        return _error(413, "body", str(exc), is_json)
    except Unsupported as exc:
        return _error(415, "content-encoding", str(exc), is_json)
    except BadEncoding as exc:
        return _error(400, "body", str(exc), is_json)
    except BatchError as exc:
        return _error(400, exc.path, exc.reason, is_json)
    if decoded.batch.series or decoded.deltas or decoded.markers:
        try:
            await run_in_threadpool(
                store_batch,
                engine=engine,
                batch=decoded.batch,
                cache=cache,
                deltas=decoded.deltas,
                markers=decoded.markers,
            )
        except DeltaOverflow as exc:
            field = decoded.delta_paths[exc.index]
            return _error(400, field, f"{exc}; nothing stored", is_json)
    response = ExportMetricsServiceResponse()
    if decoded.rejected:
        response.partial_success.rejected_data_points = decoded.rejected
        response.partial_success.error_message = "; ".join(decoded.reasons)[:1000]
    return _reply(response, 200, is_json)
