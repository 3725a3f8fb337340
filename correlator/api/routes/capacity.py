"""Capacity planning and the /metrics endpoint with the backlog autoscaling signal."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.concurrency import run_in_threadpool

from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep, RegistryDep
from correlator.api.handlers import field_error, now, read
from correlator.api.schemas.capacity import PlanIn, PlanOut
from correlator.incidents.capacity import PlanError, PlanInput, plan
from correlator.store.measures import measured_capacity

router = APIRouter(tags=["capacity"])
MEASURE_WINDOW_S = 7 * 86400.0


@router.post("/api/v1/capacity/plan", response_model=PlanOut, response_model_exclude_unset=True)
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
            latency_metric=body.latency_metric,
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
                f"not given and no {body.latency_metric} stored for {body.model}",
            )
    figures = PlanInput(
        sla_latency_ms=body.sla_latency_ms,
        latency_per_request_ms=latency,
        qps_per_replica=qps,
        peak_qps=body.peak_qps,
        redundancy=body.redundancy,
        gpu=body.gpu,
        qps_source=source,
    )
    try:
        return plan(figures)
    except PlanError as exc:
        raise field_error(exc.field, str(exc)) from None


@router.get("/metrics", include_in_schema=False)
async def metrics(registry: RegistryDep, _reader: ReaderDep) -> Response:
    """Return the service's Prometheus metrics (recommended replicas per model)."""
    body = await run_in_threadpool(generate_latest, registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
