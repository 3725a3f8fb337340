"""Generate the demo incident: the article's long-input story, clearly labelled as demo data."""

from __future__ import annotations

import time

import numpy as np

from correlator.bundle import Bundle, Series

MODEL = "demo_ranker"
INSTANCES = ("demo-i-1", "demo-i-2", "demo-i-3", "demo-i-4")
HOSTS = {"demo-gpu-node-1": ("demo-i-1", "demo-i-2"), "demo-gpu-node-2": ("demo-i-3", "demo-i-4")}
FEATURE_SERVICE = "demo-user-features"
STEP = 15.0
LENGTH_BOUNDS = ("16", "32", "64", "128", "256", "512", "1024", "+Inf")
SCORE_BOUNDS = ("0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "+Inf")
# Share of inputs per length bucket: normal traffic (5 % over 128 tokens), drifted (35 %).
SHORT_MIX = np.array([0.10, 0.30, 0.35, 0.20, 0.03, 0.015, 0.005, 0.0])
LONG_MIX = np.array([0.06, 0.18, 0.23, 0.18, 0.10, 0.15, 0.10, 0.0])
SCORE_MIX = np.array([0.05, 0.10, 0.15, 0.18, 0.17, 0.14, 0.10, 0.06, 0.04, 0.01])
SLA_NAME = f"{MODEL} p99 latency (DEMO)"


def demo_window(*, hours: float = 6.0, end: float | None = None) -> tuple[float, float]:
    """Return the (start, end) of the demo data, ending near now on a 15 s grid."""
    end = float(np.floor((end if end is not None else time.time()) / STEP) * STEP)
    return end - hours * 3600.0, end


def breach_window(end: float) -> tuple[float, float]:
    """Return the demo breach (start, end): 30 min, ending 20 min before the data ends."""
    stop = end - 20 * 60.0
    return stop - 30 * 60.0, stop


def _ramp(ts: np.ndarray, start: float, stop: float, rise: float = 180.0) -> np.ndarray:
    """Return 0..1: rising over `rise` seconds from start, falling after stop."""
    up = np.clip((ts - start) / rise, 0.0, 1.0)
    down = np.clip((stop + rise - ts) / rise, 0.0, 1.0)
    return np.minimum(up, down)


def _series(name: str, labels: dict, ts: np.ndarray, values: np.ndarray) -> Series:
    return Series(name=name, labels=labels, ts=ts, values=np.round(values, 4))


def _model_series(rng, ts, drift, breach, instance) -> list[Series]:
    labels = {"model": MODEL, "instance": instance, "version": "2.4.0"}
    n = ts.size
    day = 1.0 + 0.25 * np.sin(2 * np.pi * (ts % 86400) / 86400.0)
    qps = 220.0 * day + rng.normal(0, 6, n)
    p50 = 8.0 + 6.0 * drift + rng.normal(0, 0.4, n)
    p95 = 14.0 + 40.0 * drift + rng.normal(0, 0.8, n)
    p99 = 20.0 + 100.0 * breach + 30.0 * (drift - breach).clip(0) + rng.normal(0, 1.2, n)
    batch = 24.0 - 10.0 * drift + rng.normal(0, 0.8, n)
    queue = np.maximum(0, 3.0 + 40.0 * drift + rng.normal(0, 1.0, n))
    err = np.maximum(0, 0.001 + 0.002 * drift + rng.normal(0, 0.0003, n))
    timeout = np.maximum(0, 0.0005 + 0.03 * breach + rng.normal(0, 0.0004, n))
    out = [
        _series("model_requests_per_second", labels, ts, qps),
        _series("model_latency_p50_ms", labels, ts, p50),
        _series("model_latency_p95_ms", labels, ts, p95),
        _series("model_latency_p99_ms", labels, ts, p99),
        _series("model_batch_size_mean", labels, ts, batch),
        _series("model_queue_length", labels, ts, queue),
        _series("model_error_rate", labels, ts, err),
        _series("model_timeout_rate", labels, ts, timeout),
    ]
    requests = qps * STEP
    mix = SHORT_MIX[None, :] * (1 - drift[:, None]) + LONG_MIX[None, :] * drift[:, None]
    out += _histogram("model_input_length_bucket", labels, ts, requests, mix, LENGTH_BOUNDS)
    score = np.repeat(SCORE_MIX[None, :], n, axis=0)
    out += _histogram("model_score_bucket", labels, ts, requests, score, SCORE_BOUNDS)
    return out


def _histogram(name, labels, ts, requests, mix, bounds) -> list[Series]:
    per_step = requests[:, None] * mix
    cumulative = np.cumsum(np.cumsum(per_step, axis=1), axis=0)  # over buckets, then time
    cumulative[:, -1] = np.cumsum(requests)
    return [
        Series(name=name, labels=labels | {"le": le}, ts=ts, values=np.round(cumulative[:, i]))
        for i, le in enumerate(bounds)
    ]


def _system_series(rng, ts, drift, host, instances) -> list[Series]:
    n = ts.size
    h = {"host": host}
    out = [
        _series("node_cpu_utilization_percent", h, ts, 35 + rng.normal(0, 2.5, n)),
        _series("node_memory_used_bytes", h, ts, 96e9 + rng.normal(0, 3e8, n)),
        _series("node_disk_io_utilization_percent", h, ts, 12 + rng.normal(0, 1.5, n).clip(-8)),
        _series("node_network_receive_bytes_per_second", h, ts, 4.0e7 + rng.normal(0, 2e6, n)),
        _series("node_network_transmit_bytes_per_second", h, ts, 2.5e7 + rng.normal(0, 1e6, n)),
    ]
    for gpu, instance in enumerate(instances):
        g = h | {"gpu": str(gpu), "instance": instance}
        util = 30 + 3 * drift + rng.normal(0, 2.0, n)
        out += [
            _series("gpu_utilization_percent", g, ts, util),
            _series("gpu_memory_used_bytes", g, ts, 31e9 + 2e9 * drift + rng.normal(0, 1e8, n)),
            _series("gpu_temperature_celsius", g, ts, 58 + 2 * drift + rng.normal(0, 0.5, n)),
            _series("container_restarts_total", {"host": host, "instance": instance}, ts, 0 * ts),
        ]
    return out


def _changes(start: float, end: float, breach_start: float) -> list[dict]:
    m = {"model": MODEL}
    return [
        {
            "id": "demo-chg-1",
            "person": "sam.ops (demo)",
            "ts": start + 1800,
            "kind": "image",
            "target": f"model:{MODEL}",
            "summary": "[demo] inference image 23.10 -> 23.12 (security patch), all instances",
            "owner": "infra",
            "labels": m,
        },
        {
            "id": "demo-chg-2",
            "person": "wang.fang (demo)",
            "ts": breach_start - 95 * 60,
            "kind": "infra",
            "target": "host:demo-gpu-node-2",
            "summary": "[demo] kernel 6.1.0-25 -> 6.1.0-26 on demo-gpu-node-2 (rolling reboot)",
            "owner": "infra",
            "labels": {"host": "demo-gpu-node-2"},
        },
        {
            "id": "demo-chg-3",
            "person": "li.wei (demo)",
            "ts": breach_start - 7 * 60,
            "kind": "feature",
            "target": f"model:{MODEL}",
            "summary": "[demo] query-expansion launched upstream: full queries sent as model input",
            "owner": "algo",
            "labels": m,
        },
        {
            "id": "demo-chg-4",
            "person": "wang.fang (demo)",
            "ts": min(breach_start + 22 * 60, end - 60),
            "kind": "capacity",
            "target": f"model:{MODEL}",
            "summary": "[demo] replicas 4 -> 6 (mitigation attempt)",
            "owner": "infra",
            "labels": m,
        },
    ]


def _topology() -> dict:
    nodes = [
        {"id": f"model:{MODEL}", "kind": "model", "owner": "algo"},
        {"id": f"service:{FEATURE_SERVICE}", "kind": "feature_service", "owner": "infra"},
    ]
    edges = [{"from": f"model:{MODEL}", "to": f"service:{FEATURE_SERVICE}", "kind": "calls"}]
    for host, instances in HOSTS.items():
        nodes.append({"id": f"host:{host}", "kind": "host", "owner": "infra"})
        for instance in instances:
            nodes.append({"id": f"instance:{instance}", "kind": "instance", "owner": "infra"})
            edges.append({"from": f"instance:{instance}", "to": f"model:{MODEL}", "kind": "serves"})
            edges.append({"from": f"instance:{instance}", "to": f"host:{host}", "kind": "runs_on"})
    return {"nodes": nodes, "edges": edges}


def demo_bundle(*, hours: float = 6.0, end: float | None = None, seed: int = 7) -> Bundle:
    """Return the demo incident as a bundle: deterministic for a given seed and end."""
    start, end = demo_window(hours=hours, end=end)
    ts = np.arange(start, end + STEP / 2, STEP)
    b0, b1 = breach_window(end)
    drift = _ramp(ts, b0 - 4 * 60, b1, rise=240.0)  # long inputs arrive 4 min before the breach
    breach = _ramp(ts, b0 - 60, b1, rise=60.0)
    rng = np.random.default_rng(seed)
    series: list[Series] = []
    for instance in INSTANCES:
        series += _model_series(rng, ts, drift, breach, instance)
    for host, instances in HOSTS.items():
        series += _system_series(rng, ts, drift, host, instances)
    fs = {"service": FEATURE_SERVICE}
    series.append(
        _series("feature_service_latency_p99_ms", fs, ts, 5 + rng.normal(0, 0.3, ts.size))
    )
    sla = {
        "name": SLA_NAME,
        "metric": "model_latency_p99_ms",
        "labels": {"model": MODEL},
        "aggregate": "max",
        "op": ">",
        "threshold": 50,
        "for_seconds": 120,
    }
    return Bundle(
        series=series,
        changes=_changes(start, end, b0),
        topology=_topology(),
        sla=sla,
        extra={"demo": True},
    )


def demo_rotations(model: str, end: float) -> list[dict]:
    """Return weekly algo and infra rotations of the demo model (demo people, labelled so)."""
    # Shifts hand over at midday, three and a half days after the data ends: the breach (in the
    # last hours) and the days of looking at it fall in one shift, so the incident, the chat
    # message and the Models and On-call pages name the same people.
    start = end - 14 * 86400 + 3.5 * 86400
    people = {
        "algo": [("li.wei (demo)", "@li.wei"), ("chen.yu (demo)", "@chen.yu")],
        "infra": [("wang.fang (demo)", "@wang.fang"), ("sam.ops (demo)", "@sam.ops")],
    }
    return [
        {
            "name": f"[demo] {model} {team}",
            "team": team,
            "model": model,
            "members": [{"name": name, "contact": contact} for name, contact in members],
            "start": start,
            "period_days": 7,
        }
        for team, members in people.items()
    ]


def demo_card() -> dict:
    """Return the demo model's card (all eight parts)."""
    return {
        "purpose": "[demo] rank feed items by predicted click probability",
        "input_schema": {
            "type": "object",
            "required": ["query_tokens"],
            "properties": {"query_tokens": {"type": "array", "items": {"type": "integer"}}},
        },
        "output_schema": {"type": "object", "properties": {"scores": {"type": "array"}}},
        "feature_dependencies": [{"service": FEATURE_SERVICE, "features": ["age", "ctr_7d"]}],
        "offline_evaluation": {"dataset": "demo holdout", "metrics": {"auc": 0.78}},
        "resource_needs": {
            "gpu": "T4",
            "gpu_memory_gb": 2,
            "latency_budget_ms": 30,
            "qps_per_replica": 250,
        },
        "known_risks": ["inputs above 512 tokens multiply latency (padding to the longest)"],
        "random_seed": 42,
        "locked_dependencies": "torch==2.3.1\nnumpy==1.26.4\n",
    }


def demo_fingerprints(ts: float) -> list[dict]:
    """Return two hosts' environment fingerprints that differ in the kernel only."""
    base = {
        "driver": "550.54.15",
        "cuda": "12.4",
        "python": "3.11.7",
        "packages": {"torch": "2.3.1", "numpy": "1.26.4", "tritonclient": "2.44.0"},
        "serving": {"max_batch_size": 32, "padding": "longest"},
    }
    return [
        {
            "host": host,
            "instance": instances[0],
            "model": MODEL,
            "ts": ts,
            "fingerprint": base | {"kernel": kernel},
        }
        for (host, instances), kernel in zip(HOSTS.items(), ("6.1.0-25", "6.1.0-26"), strict=True)
    ]
