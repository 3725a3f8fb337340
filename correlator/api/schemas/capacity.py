"""Capacity planning bodies: what the planner needs and the replicas it arrives at."""

from __future__ import annotations

from pydantic import Field

from correlator.api.handlers import Body
from correlator.api.schemas.base import Number, Out


class PlanIn(Body):
    """What the capacity planner needs (qps_per_replica measured with dynamic batching)."""

    sla_latency_ms: float = Field(gt=0, le=1e6, examples=[30])
    latency_per_request_ms: float | None = Field(None, gt=0, le=1e6, examples=[12])
    qps_per_replica: float | None = Field(None, gt=0, le=1e9, examples=[40])
    peak_qps: float = Field(gt=0, le=1e9, examples=[400])
    redundancy: float = Field(0.2, ge=0, le=10, description="fraction, 0.2 = 20%")
    gpu: str = Field("", max_length=100, examples=["T4"])
    model: str | None = Field(None, max_length=200, description="take missing figures from it")
    latency_metric: str = Field(
        "model_latency_p50_ms",
        pattern=r"^model_latency_p\d{1,3}_ms$",
        description="the latency percentile a missing latency per request is measured by: "
        "the one the SLA names",
    )


class PlanOut(Out):
    """The replicas needed for the peak, plus redundancy, with the arithmetic as lines."""

    replicas: int
    replicas_with_redundancy: int
    fits_sla: bool = Field(description="whether one request's latency fits the SLA")
    qps_per_replica: Number
    qps_source: str = Field(examples=["given", "measured"])
    latency_per_request_ms: Number
    steps: list[str]
