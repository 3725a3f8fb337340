"""Capacity planning and the /metrics endpoint with the backlog autoscaling signal."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep
from correlator.api.process_io import Body, field_error, now, read
from correlator.incidents.capacity import PlanInput, plan
from correlator.store.measures import measured_capacity

router = APIRouter(tags=["capacity"])
MEASURE_WINDOW_S = 7 * 86400.0


class PlanIn(Body):
    """What the capacity planner needs (qps_per_replica measured with dynamic batching)."""

    sla_latency_ms: float = Field(gt=0, le=1e6, examples=[30])
    latency_per_request_ms: float | None = Field(None, gt=0, le=1e6, examples=[12])
    qps_per_replica: float | None = Field(None, gt=0, le=1e9, examples=[40])
    peak_qps: float = Field(gt=0, le=1e9, examples=[400])
    redundancy: float = Field(0.2, ge=0, le=10, description="fraction, 0.2 = 20%")
    gpu: str = Field("", max_length=100, examples=["T4"])
    model: str | None = Field(None, max_length=200, description="take missing figures from it")


@router.post("/api/v1/capacity/plan")
async def capacity_plan(body: PlanIn, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return the replicas needed for the peak, plus redundancy, with the arithmetic."""
    qps, latency, source = body.qps_per_replica, body.latency_per_request_ms, "given"
    if qps is None or latency is None:
        if not body.model:
            missing = "qps_per_replica" if qps is None else "latency_per_request_ms"
            raise field_error(missing, "is required unless 'model' has stored metrics")
        t = now()
        got = await read(
            engine,
            measured_capacity,
            model=body.model,
            sla_latency_ms=body.sla_latency_ms,
            start=t - MEASURE_WINDOW_S,
            end=t,
        )
        if qps is None:
            qps, source = got["qps_per_replica"], "measured"
        latency = latency if latency is not None else got["latency_per_request_ms"]
        if not qps:
            raise field_error(
                "qps_per_replica",
                f"not given and no model_requests_per_second stored for {body.model}",
            )
        if latency is None:
            raise field_error(
                "latency_per_request_ms",
                f"not given and no model_latency_p50_ms stored for {body.model}",
            )
    return plan(
        PlanInput(
            sla_latency_ms=body.sla_latency_ms,
            latency_per_request_ms=latency,
            qps_per_replica=qps,
            peak_qps=body.peak_qps,
            redundancy=body.redundancy,
            gpu=body.gpu,
            qps_source=source,
        )
    )


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, _reader: ReaderDep) -> Response:
    """Return the service's Prometheus metrics (recommended replicas per model)."""
    body = await run_in_threadpool(generate_latest, request.app.state.metrics_registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
