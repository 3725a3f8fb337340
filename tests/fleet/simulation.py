"""A simulated GPU fleet as its exporters write it, with one incident of a given kind.

Series carry the names and labels real exporters use: dcgm-exporter per GPU
(``DCGM_FI_DEV_*`` with ``Hostname``, ``gpu``, ``UUID``, ``pod``, ``namespace``),
node-exporter per host (``node_cpu_seconds_total`` counters), model servers instrumented
with causeline's probe (``model_latency_p99_ms``, ``model_requests_per_second``,
``model_input_length_bucket``) and feature services. The fleet test and
``benchmarks/fleet.py`` write them into VictoriaMetrics and read them back through the
shipped mapping. ``truth`` is for scoring only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from correlator.bundle import Series

STEP = 15.0
REPLICAS = 4
GPUS = 8
FEATURES = 3  # feature services, each called by every third model
# Metric, normal level, noise: one series per GPU.
DCGM = (
    ("DCGM_FI_DEV_GPU_UTIL", 55.0, 4.0),
    ("DCGM_FI_DEV_FB_USED", 30_000.0, 200.0),
    ("DCGM_FI_DEV_GPU_TEMP", 62.0, 1.0),
    ("DCGM_FI_DEV_POWER_USAGE", 210.0, 5.0),
    ("DCGM_FI_DEV_SM_CLOCK", 1_410.0, 5.0),
    ("DCGM_FI_DEV_XID_ERRORS", 0.0, 0.0),
)
BUCKETS = (64, 128, 256, 512, 1024, 2048)  # input length (tokens), then +Inf
KINDS = ("gpu_throttle", "noisy_neighbour", "feature_latency", "input_length", "xid")


@dataclass
class Fleet:
    """The fleet's series, topology and changes, and what the incident's root cause is."""

    series: list[Series]
    topology: dict
    changes: list[dict] = field(default_factory=list)
    model: str = ""
    truth: list[dict] = field(default_factory=list)  # root causes, FORMAT.md's truth form


def host(n: int) -> str:
    """Return the name of node ``n``."""
    return f"gpu-node-{n}"


def placement(models: int, nodes: int) -> dict[str, list[str]]:
    """Return each model's replica hosts (replicas spread round the nodes)."""
    return {
        f"m{m}": [host((m * REPLICAS + r) % nodes) for r in range(REPLICAS)] for m in range(models)
    }


def feature_of(model: str) -> str:
    """Return the feature service a model calls."""
    return f"features-{int(model[1:]) % FEATURES}"


def topology(where: dict[str, list[str]]) -> dict:
    """Return models, their instances and hosts, and the feature services they call."""
    nodes = {f"service:features-{k}": "feature_service" for k in range(FEATURES)}
    edges = []
    for model, hosts in where.items():
        nodes[f"model:{model}"] = "model"
        edges.append({"from": f"model:{model}", "to": f"service:{feature_of(model)}"})
        for h in hosts:
            instance = f"instance:{h}:8000"
            nodes |= {instance: "instance", f"host:{h}": "host"}
            edges += [{"from": instance, "to": f"model:{model}", "kind": "serves"}]
            edges += [{"from": instance, "to": f"host:{h}", "kind": "runs_on"}]
    edges = [e | {"kind": e.get("kind", "calls")} for e in edges]
    owner = {"model": "algo"}
    out = [{"id": i, "kind": k, "owner": owner.get(k, "infra")} for i, k in nodes.items()]
    return {"nodes": out, "edges": edges}


def build(
    kind: str, *, nodes: int, models: int, ts: np.ndarray, breach: float, seed: int = 0
) -> Fleet:
    """Return the fleet over ``ts`` with one incident of ``kind`` at a model chosen by ``seed``.

    The incident's cause starts a few minutes before ``breach``; the model's p99 crosses
    100 ms from ``breach`` on the replicas the cause touches.
    """
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")
    rng = np.random.default_rng(seed)
    where = placement(models, nodes)
    model = f"m{int(rng.integers(models))}"
    hosts = where[model]
    sick_hosts = {
        "gpu_throttle": hosts[:2],
        "noisy_neighbour": hosts[1:2],
        "xid": hosts[2:3],
    }.get(kind, hosts)
    sick_gpu = str(int(model[1:]) % GPUS)
    lead = {"gpu_throttle": 360, "noisy_neighbour": 300, "feature_latency": 240}
    start = breach - lead.get(kind, 420 if kind == "input_length" else 180)
    after = ts >= start
    fleet = Fleet([], topology(where), model=model)
    for n in range(nodes):
        fleet.series += _gpus(host(n), n, ts, rng, kind, after, sick_hosts, sick_gpu)
        busy = kind == "noisy_neighbour" and host(n) in sick_hosts
        fleet.series.append(_cpu_idle(host(n), ts, rng, np.where(busy & after, 0.05, 0.6)))
    for m, replicas in where.items():
        for h in replicas:
            slow = m == model and h in sick_hosts
            fleet.series += _model(m, h, ts, rng, slow=slow, breach=breach)
            longer = kind == "input_length" and slow
            fleet.series += _input_lengths(m, h, ts, rng, longer, start)
    for k in range(FEATURES):
        name = f"features-{k}"
        p99 = 8.0 + rng.normal(0, 0.4, ts.size)
        if kind == "feature_latency" and name == feature_of(model):
            p99 = np.where(after, 120.0, p99)
        fleet.series.append(Series("feature_service_latency_p99_ms", {"service": name}, ts, p99))
    fleet.truth = _truth(kind, model, sick_hosts, sick_gpu)
    if kind == "input_length":
        change = {"id": f"rollout-{model}-v2", "ts": float(start - 30), "kind": "deploy"}
        change |= {"target": f"model:{model}", "owner": "algo", "labels": {"model": model}}
        fleet.changes.append(change | {"summary": f"{model} 2.0 rollout: long-context prompts"})
        fleet.truth.append({"kind": "change", "id": change["id"]})
    return fleet


def _truth(kind: str, model: str, hosts: list[str], gpu: str) -> list[dict]:
    """Return the root causes of an incident, as the truth of FORMAT.md says them."""

    def on(metric: str, labels: dict) -> dict:
        return {"kind": "series", "metric": metric, "labels": labels}

    if kind == "gpu_throttle":
        return [
            on(m, {"host": h})
            for h in hosts
            for m in ("gpu_sm_clock_mhz", "gpu_temperature_celsius")
        ]
    if kind == "noisy_neighbour":
        return [on("node_cpu_utilization_percent", {"host": hosts[0]})]
    if kind == "feature_latency":
        return [on("feature_service_latency_p99_ms", {"service": feature_of(model)})]
    if kind == "input_length":
        return [on("model_input_length_bucket", {"model": model})]
    return [
        on(m, {"host": hosts[0], "gpu": gpu}) for m in ("gpu_xid_errors", "gpu_utilization_percent")
    ]


def _gpus(name, n, ts, rng, kind, after, sick_hosts, sick_gpu) -> list[Series]:
    out = []
    for g in range(GPUS):
        sick = name in sick_hosts and str(g) == sick_gpu
        for metric, level, noise in DCGM:
            values = level + rng.normal(0, noise, ts.size) if noise else np.full(ts.size, level)
            if sick and kind == "gpu_throttle":
                if metric == "DCGM_FI_DEV_SM_CLOCK":
                    values = np.where(after, 600.0 + rng.normal(0, 5, ts.size), values)
                if metric == "DCGM_FI_DEV_GPU_TEMP":
                    values = np.where(after, 91.0 + rng.normal(0, 0.5, ts.size), values)
            if sick and kind == "xid":
                if metric == "DCGM_FI_DEV_XID_ERRORS":
                    values = np.where(after, 79.0, values)  # fallen off the bus
                if metric == "DCGM_FI_DEV_GPU_UTIL":
                    values = np.where(after, 0.0, values)
            labels = {"Hostname": name, "gpu": str(g), "UUID": f"GPU-{n:04d}-{g}"}
            labels |= {"pod": f"dcgm-exporter-{n}", "namespace": "gpu-operator"}
            out.append(Series(metric, labels, ts, np.round(np.maximum(values, 0.0), 2)))
    return out


def _cpu_idle(name: str, ts: np.ndarray, rng, idle_share: np.ndarray) -> Series:
    """Return one CPU's idle-seconds counter: ``idle_share`` of each step idle."""
    share = np.clip(idle_share + rng.normal(0, 0.02, ts.size), 0.0, 1.0)
    idle = np.cumsum(share * STEP)
    return Series(
        "node_cpu_seconds_total",
        {"instance": f"{name}:9100", "cpu": "0", "mode": "idle"},
        ts,
        np.round(idle, 3),
    )


def _model(model: str, name: str, ts, rng, *, slow: bool, breach: float) -> list[Series]:
    labels = {"model": model, "instance": f"{name}:8000"}
    p99 = 40.0 + rng.normal(0, 2, ts.size)
    if slow:
        p99 = np.where(ts >= breach, 180.0 + rng.normal(0, 5, ts.size), p99)
    qps = 250.0 + rng.normal(0, 10, ts.size)
    return [
        Series("model_latency_p99_ms", labels, ts, np.round(p99, 2)),
        Series("model_requests_per_second", labels, ts, np.round(qps, 2)),
    ]


def _input_lengths(model: str, name: str, ts, rng, longer: bool, start: float) -> list[Series]:
    """Return a replica's input-length histogram: cumulative bucket counters."""
    usual = np.array([0.30, 0.30, 0.25, 0.10, 0.04, 0.01])
    long = np.array([0.05, 0.05, 0.10, 0.20, 0.30, 0.30])
    per_step = 250.0 * STEP
    shares = np.where(((ts >= start) & longer)[:, None], long, usual)
    counts = rng.poisson(per_step * shares)  # (points, buckets) per step
    cumulative = np.cumsum(np.cumsum(counts, axis=1), axis=0)
    out = []
    for k, le in enumerate((*BUCKETS, "+Inf")):
        col = cumulative[:, min(k, len(BUCKETS) - 1)]
        labels = {"model": model, "instance": f"{name}:8000", "le": str(le)}
        out.append(Series("model_input_length_bucket", labels, ts, col.astype(float)))
    return out
