"""Capacity arithmetic: replicas from the latency SLA and peak QPS, and the backlog signal."""

from __future__ import annotations

import math
from dataclasses import dataclass

# A plan past this many replicas comes from a wrong figure (QPS per replica in the wrong unit,
# a near-zero measurement), not from a fleet anyone runs: it is refused, naming the figure.
MAX_REPLICAS = 1_000_000


class PlanError(ValueError):
    """A figure the planner cannot plan with; ``field`` names it."""

    def __init__(self, field: str, msg: str):
        super().__init__(msg)
        self.field = field


def _num(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True, slots=True)
class PlanInput:
    """What the planner needs; qps_per_replica is measured with dynamic batching."""

    sla_latency_ms: float
    latency_per_request_ms: float
    qps_per_replica: float
    peak_qps: float
    redundancy: float = 0.2
    gpu: str = ""
    qps_source: str = "given"


def plan(p: PlanInput) -> dict:
    """Return replicas, replicas with redundancy and the arithmetic; PlanError past MAX_REPLICAS."""
    on = f" on {p.gpu}" if p.gpu else ""
    fits = p.latency_per_request_ms <= p.sla_latency_ms
    steps = []
    if fits:
        steps.append(
            f"latency budget: {_num(p.latency_per_request_ms)} ms per request{on} <= SLA "
            f"{_num(p.sla_latency_ms)} ms ({_num(p.sla_latency_ms - p.latency_per_request_ms)} ms "
            "headroom)"
        )
    else:
        steps.append(
            f"latency budget: {_num(p.latency_per_request_ms)} ms per request{on} exceeds the SLA "
            f"of {_num(p.sla_latency_ms)} ms: more replicas will not fix this; make the model "
            "faster (smaller model, distillation, quantisation) or relax the SLA"
        )
    source = (
        "measured from stored metrics" if p.qps_source == "measured" else "with dynamic batching"
    )
    steps.append(f"throughput: {_num(p.qps_per_replica)} QPS per replica {source}")
    raw = p.peak_qps / p.qps_per_replica
    if not raw <= MAX_REPLICAS:
        raise PlanError(
            "qps_per_replica",
            f"peak {_num(p.peak_qps)} QPS / {_num(p.qps_per_replica)} QPS per replica "
            f"({p.qps_source}) asks for {raw:.3g} replicas, past the {MAX_REPLICAS:,} a plan "
            "covers: qps_per_replica is the queries per second one replica serves",
        )
    replicas = max(1, math.ceil(raw - 1e-9))
    steps.append(
        f"replicas = ceil(peak {_num(p.peak_qps)} QPS / {_num(p.qps_per_replica)} QPS per replica)"
        f" = ceil({raw:.4g}) = {replicas}"
    )
    factor = 1 + p.redundancy
    spare = max(replicas, math.ceil(replicas * factor - 1e-9))
    steps.append(
        f"with {_num(round(p.redundancy * 100, 2))}% redundancy: "
        f"ceil({replicas} x {factor:g}) = {spare}"
    )
    return {
        "replicas": replicas,
        "replicas_with_redundancy": spare,
        "fits_sla": fits,
        "qps_per_replica": p.qps_per_replica,
        "qps_source": p.qps_source,
        "latency_per_request_ms": p.latency_per_request_ms,
        "steps": steps,
    }


def recommended_replicas(
    *,
    queue_length: float,
    arrival_qps: float,
    service_rate: float,
    drain_seconds: float = 30.0,
    min_replicas: int = 1,
) -> int:
    """Return replicas that serve arrivals and drain the backlog within ``drain_seconds``."""
    if service_rate <= 0 or not math.isfinite(service_rate):
        return min_replicas
    need = (
        max(arrival_qps, 0.0) + max(queue_length, 0.0) / max(drain_seconds, 1e-9)
    ) / service_rate
    return max(min_replicas, math.ceil(need - 1e-9))
