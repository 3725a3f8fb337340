"""A simulated GPU fleet as its exporters write it, with one incident of a given kind.

Series carry the names and labels real exporters use: dcgm-exporter per GPU
(``DCGM_FI_DEV_*`` with ``Hostname``, ``gpu``, ``UUID``, ``pod``, ``namespace``),
node-exporter per host (CPU mode counters per core, memory, disk, network, load), models
served by vLLM (``vllm:*`` histograms by ``model_name``) and by Triton (``nv_inference_*``
by ``model`` and ``version``) on 4-16 replicas each, and feature services (recording rules
in causeline's names). The fleet test and ``benchmarks/fleet.py`` write them into
VictoriaMetrics and read them back through ``deploy/prometheus/mappings/fleet.yml``.
``truth`` is for scoring only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from correlator.bundle import Series

MAPPING = Path(__file__).resolve().parents[2] / "deploy/prometheus/mappings/fleet.yml"
STEP = 15.0
GPUS = 8
FEATURES = 3  # feature services, each called by every third model
MIN_REPLICAS, MAX_REPLICAS = 4, 16
# Metric, normal level, noise: one series per GPU.
DCGM = (
    ("DCGM_FI_DEV_GPU_UTIL", 55.0, 4.0),
    ("DCGM_FI_DEV_FB_USED", 30_000.0, 200.0),
    ("DCGM_FI_DEV_FB_FREE", 51_000.0, 200.0),
    ("DCGM_FI_DEV_GPU_TEMP", 62.0, 1.0),
    ("DCGM_FI_DEV_MEMORY_TEMP", 70.0, 1.0),
    ("DCGM_FI_DEV_POWER_USAGE", 210.0, 5.0),
    ("DCGM_FI_DEV_SM_CLOCK", 1_410.0, 5.0),
    ("DCGM_FI_DEV_MEM_CLOCK", 1_593.0, 0.0),
    ("DCGM_FI_DEV_XID_ERRORS", 0.0, 0.0),
    ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 0.0, 0.0),  # a bit mask; 0x20|0x40: thermal
)
CPU_MODES = {"idle": 0.6, "user": 0.3, "system": 0.06, "iowait": 0.02, "irq": 0.005}
CPU_MODES |= {"softirq": 0.01, "steal": 0.0, "nice": 0.005}
# vLLM's own bucket bounds: end-to-end latency (s) and prompt length (tokens).
E2E_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0)
PROMPT_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
SLA_MS = {"vllm": 2_500.0, "triton": 100.0}  # each model's p99 objective by its server
KINDS = ("gpu_throttle", "noisy_neighbour", "feature_latency", "input_length", "xid")


@dataclass
class Fleet:
    """The fleet's series, topology, SLAs and changes, and what the incident's cause is."""

    series: list[Series]
    topology: dict
    slas: list[dict] = field(default_factory=list)
    changes: list[dict] = field(default_factory=list)
    model: str = ""
    truth: list[dict] = field(default_factory=list)  # root causes, FORMAT.md's truth form


def host(n: int) -> str:
    """Return the name of node ``n``."""
    return f"gpu-node-{n}"


def server(model: str) -> str:
    """Return what serves a model: vLLM for even numbers, Triton for odd."""
    return "vllm" if int(model[1:]) % 2 == 0 else "triton"


def port(model: str) -> int:
    """Return the port a model's replicas are scraped on."""
    return 8000 if server(model) == "vllm" else 8002


def placement(models: int, nodes: int) -> dict[str, list[str]]:
    """Return each model's replica hosts: 4-16 replicas, spread round the nodes."""
    where, at = {}, 0
    for m in range(models):
        count = min(MIN_REPLICAS + (m * 7) % (MAX_REPLICAS - MIN_REPLICAS + 1), nodes)
        where[f"m{m}"] = [host((at + r) % nodes) for r in range(count)]
        at += count
    return where


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
            instance = f"instance:{h}:{port(model)}"
            nodes |= {instance: "instance", f"host:{h}": "host"}
            edges += [{"from": instance, "to": f"model:{model}", "kind": "serves"}]
            edges += [{"from": instance, "to": f"host:{h}", "kind": "runs_on"}]
    edges = [e | {"kind": e.get("kind", "calls")} for e in edges]
    owner = {"model": "algo"}
    out = [{"id": i, "kind": k, "owner": owner.get(k, "infra")} for i, k in nodes.items()]
    return {"nodes": out, "edges": edges}


def slas(models: int) -> list[dict]:
    """Return one p99 latency SLA per model, at its server's objective."""
    out = []
    for m in range(models):
        model = f"m{m}"
        sla = {"name": f"{model} p99", "metric": "model_latency_p99_ms", "op": ">"}
        sla |= {"labels": {"model": model}, "aggregate": "max", "for_seconds": 60.0}
        out.append(sla | {"threshold": SLA_MS[server(model)]})
    return out


def build(
    kind: str,
    *,
    nodes: int,
    models: int,
    ts: np.ndarray,
    breach: float,
    seed: int = 0,
    gpus: int = GPUS,
    cpus: int = 16,
) -> Fleet:
    """Return the fleet over ``ts`` with one incident of ``kind`` at a model chosen by ``seed``.

    The incident's cause starts a few minutes before ``breach``; the model's p99 crosses
    its objective from ``breach`` on the replicas the cause touches.
    """
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")
    rng = np.random.default_rng(seed)
    where = placement(models, nodes)
    if kind == "input_length":  # a prompt-length histogram is vLLM's
        model = f"m{2 * int(rng.integers((models + 1) // 2))}"
    else:
        model = f"m{int(rng.integers(models))}"
    hosts = where[model]
    sick_hosts = {
        "gpu_throttle": hosts[:2],
        "noisy_neighbour": hosts[1:2],
        "xid": hosts[2:3],
    }.get(kind, hosts)
    sick_gpu = str(int(model[1:]) % gpus)
    lead = {"gpu_throttle": 360, "noisy_neighbour": 300, "feature_latency": 240}
    start = breach - lead.get(kind, 420 if kind == "input_length" else 180)
    after = ts >= start
    fleet = Fleet([], topology(where), slas(models), model=model)
    for n in range(nodes):
        sick = host(n) in sick_hosts
        gpu = sick_gpu if sick else None
        fleet.series += _gpus(host(n), n, ts, rng, kind if sick else "", after, gpu, gpus)
        busy = kind == "noisy_neighbour" and sick
        fleet.series += _node(host(n), ts, rng, cpus, busy & after)
    never = np.zeros(ts.size, bool)
    for m, replicas in where.items():
        for h in replicas:
            slow = ts >= breach if m == model and h in sick_hosts else never
            longer = after if kind == "input_length" and m == model else never
            if server(m) == "vllm":
                fleet.series += _vllm(m, h, ts, rng, slow, longer)
            else:
                fleet.series += _triton(m, h, ts, rng, slow)
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


def rank_of(suspects: list[dict], truth: list[dict]) -> int | None:
    """Return the 1-based rank of the first suspect that is one of the root causes."""
    return next((i for i, s in enumerate(suspects, 1) if any(_is(s, c) for c in truth)), None)


def _is(suspect: dict, cause: dict) -> bool:
    """Say whether a suspect is a root cause (a group: its shared labels and its first)."""
    if cause["kind"] == "change":
        return suspect.get("kind") == "change" and suspect.get("id") == cause["id"]
    if suspect.get("kind") != "series" or suspect.get("metric") != cause["metric"]:
        return False
    labels = suspect.get("labels") or {}
    if suspect.get("members"):
        labels = labels | suspect["members"][0]["labels"]
    return all(labels.get(k) == v for k, v in cause["labels"].items())


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


def _gpus(name, n, ts, rng, kind, after, sick_gpu, gpus) -> list[Series]:
    """Return one node's dcgm-exporter series; ``kind`` shows on ``sick_gpu`` from ``after``."""
    out = []
    for g in range(gpus):
        sick = str(g) == sick_gpu
        for metric, level, noise in DCGM:
            values = level + rng.normal(0, noise, ts.size) if noise else np.full(ts.size, level)
            if sick and kind == "gpu_throttle":
                if metric == "DCGM_FI_DEV_SM_CLOCK":
                    values = np.where(after, 600.0 + rng.normal(0, 5, ts.size), values)
                if metric == "DCGM_FI_DEV_GPU_TEMP":
                    values = np.where(after, 91.0 + rng.normal(0, 0.5, ts.size), values)
                if metric == "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS":
                    values = np.where(after, 96.0, values)
            if sick and kind == "xid":
                if metric == "DCGM_FI_DEV_XID_ERRORS":
                    values = np.where(after, 79.0, values)  # fallen off the bus
                if metric == "DCGM_FI_DEV_GPU_UTIL":
                    values = np.where(after, 0.0, values)
            labels = {"Hostname": name, "gpu": str(g), "UUID": f"GPU-{n:04d}-{g}"}
            labels |= {"device": f"nvidia{g}", "modelName": "NVIDIA H100 80GB HBM3"}
            labels |= {"pod": f"dcgm-exporter-{n}", "namespace": "gpu-operator"}
            out.append(Series(metric, labels, ts, np.round(np.maximum(values, 0.0), 2)))
    return out


def _node(name: str, ts: np.ndarray, rng, cpus: int, busy: np.ndarray) -> list[Series]:
    """Return one node's node-exporter series: CPU mode counters per core, memory, disk, net."""
    instance = {"instance": f"{name}:9100", "job": "node"}
    shares = np.array(list(CPU_MODES.values()))
    base = np.broadcast_to(shares, (ts.size, cpus, shares.size)).copy()
    base[busy, :, 0], base[busy, :, 1] = 0.05, 0.85  # a neighbour takes the cores
    noisy = np.clip(base + rng.normal(0, 0.01, base.shape) * (base > 0), 0.0, 1.0)
    counters = np.round(np.cumsum(noisy * STEP, axis=0), 2)
    out = [
        Series(
            "node_cpu_seconds_total",
            instance | {"cpu": str(c), "mode": mode},
            ts,
            counters[:, c, k],
        )
        for c in range(cpus)
        for k, mode in enumerate(CPU_MODES)
    ]
    total = 2.0 * 2**40  # 2 TiB
    available = total * (0.6 + rng.normal(0, 0.005, ts.size))
    gauges = {
        "node_memory_MemTotal_bytes": np.full(ts.size, total),
        "node_memory_MemAvailable_bytes": available,
        "node_memory_MemFree_bytes": available * 0.4,
        "node_memory_Cached_bytes": available * 0.5,
        "node_load1": cpus * 0.4 + rng.normal(0, 0.2, ts.size),
        "node_load5": np.full(ts.size, cpus * 0.4),
        "node_load15": np.full(ts.size, cpus * 0.4),
    }
    out += [Series(k, instance, ts, np.round(v, 2)) for k, v in gauges.items()]
    rate = {"node_disk_io_time_seconds_total": 0.05, "node_disk_read_bytes_total": 2e6}
    rate |= {"node_disk_written_bytes_total": 8e6}
    for device in ("nvme0n1", "nvme1n1"):
        for metric, per_s in rate.items():
            values = np.cumsum(per_s * STEP * (1 + rng.normal(0, 0.05, ts.size)))
            out.append(Series(metric, instance | {"device": device}, ts, np.round(values, 2)))
    for device in ("eth0", "eth1", "lo"):
        for metric in ("node_network_receive_bytes_total", "node_network_transmit_bytes_total"):
            values = np.cumsum(5e7 * STEP * (1 + rng.normal(0, 0.05, ts.size)))
            out.append(Series(metric, instance | {"device": device}, ts, np.round(values)))
    return out


def _lognormal_shares(bounds, median: float, sigma: float) -> np.ndarray:
    """Return the share of a lognormal at or below each bound, then 1 (+Inf): cumulative."""
    cdf = [0.5 * (1 + math.erf(math.log(b / median) / (sigma * math.sqrt(2)))) for b in bounds]
    return np.array([*cdf, 1.0])


def _histogram(name, labels, ts, rng, per_step, bounds, shares, mean) -> list[Series]:
    """Return a Prometheus histogram's counters: ``shares[i]`` cumulative shares per point."""
    counts = rng.poisson(per_step, ts.size).astype(float)
    within = np.diff(shares, prepend=0.0, axis=-1)  # per bucket, each point's own mix
    per_bucket = np.cumsum(rng.poisson(counts[:, None] * within), axis=0)
    cumulative = np.cumsum(per_bucket, axis=1)
    total = cumulative[:, -1]
    out = [
        Series(f"{name}_bucket", labels | {"le": str(le)}, ts, cumulative[:, k])
        for k, le in enumerate((*map(str, bounds), "+Inf"))
    ]
    out.append(Series(f"{name}_count", labels, ts, total))
    out.append(
        Series(f"{name}_sum", labels, ts, np.round(np.cumsum(np.diff(total, prepend=0) * mean), 2))
    )
    return out


def _vllm(model, name, ts, rng, slow, longer) -> list[Series]:
    """Return a vLLM replica's series: slow where ``slow``, long prompts where ``longer``."""
    labels = {"model_name": model, "instance": f"{name}:8000", "job": "vllm"}
    fast = _lognormal_shares(E2E_BUCKETS, 0.6, 0.25)
    late = _lognormal_shares(E2E_BUCKETS, 4.0, 0.3)
    mix = np.where(slow[:, None], late, fast)
    per_step = 20.0 * STEP
    out = _histogram(
        "vllm:e2e_request_latency_seconds", labels, ts, rng, per_step, E2E_BUCKETS, mix, 0.7
    )
    short = _lognormal_shares(PROMPT_BUCKETS, 300.0, 0.8)
    long = _lognormal_shares(PROMPT_BUCKETS, 3_000.0, 0.6)
    prompts = np.where(longer[:, None], long, short)
    out += _histogram(
        "vllm:request_prompt_tokens", labels, ts, rng, per_step, PROMPT_BUCKETS, prompts, 400.0
    )
    done = np.cumsum(rng.poisson(per_step, ts.size)).astype(float)
    out.append(Series("vllm:request_success_total", labels | {"finished_reason": "stop"}, ts, done))
    out.append(
        Series("vllm:num_requests_running", labels, ts, rng.poisson(12, ts.size).astype(float))
    )
    out.append(
        Series("vllm:num_requests_waiting", labels, ts, rng.poisson(1, ts.size).astype(float))
    )
    usage = np.round(np.clip(0.4 + rng.normal(0, 0.03, ts.size), 0, 1), 3)
    out.append(Series("vllm:gpu_cache_usage_perc", labels, ts, usage))
    return out


def _triton(model, name, ts, rng, slow) -> list[Series]:
    """Return a Triton replica's series: counters, and latency summaries (summary_latencies)."""
    labels = {"model": model, "version": "1", "instance": f"{name}:8002", "job": "triton"}
    per_step = 250.0 * STEP
    done = np.cumsum(rng.poisson(per_step, ts.size)).astype(float)
    out = [
        Series("nv_inference_request_success", labels, ts, done),
        Series("nv_inference_request_failure", labels, ts, np.zeros(ts.size)),
        Series("nv_inference_count", labels, ts, done * 4),
        Series("nv_inference_exec_count", labels, ts, done),
        Series("nv_inference_request_duration_us", labels, ts, np.round(done * 25_000.0)),
        Series("nv_inference_queue_duration_us", labels, ts, np.round(done * 2_000.0)),
        Series(
            "nv_inference_pending_request_count", labels, ts, rng.poisson(2, ts.size).astype(float)
        ),
    ]
    for q, usual, late in (
        ("0.5", 20_000.0, 90_000.0),
        ("0.9", 30_000.0, 150_000.0),
        ("0.99", 40_000.0, 180_000.0),
    ):
        values = np.where(slow, late, usual) * (1 + rng.normal(0, 0.04, ts.size))
        out.append(
            Series(
                "nv_inference_request_summary_us", labels | {"quantile": q}, ts, np.round(values)
            )
        )
    out.append(Series("nv_inference_request_summary_us_count", labels, ts, done))
    out.append(Series("nv_inference_request_summary_us_sum", labels, ts, np.round(done * 25_000.0)))
    return out
