"""The panels of the joint board: what each one draws and which series it needs."""

from __future__ import annotations

from dataclasses import dataclass

from dashboard.selectors import selector


@dataclass(frozen=True, slots=True)
class Panel:
    """One panel: its key, title, unit, metrics, the labels that select it and how to draw it."""

    key: str
    title: str
    unit: str
    metrics: tuple[str, ...]
    scope: str  # "model", "host", "gpu", "instance", or "fixed" (its own selectors)
    board: str  # "model", "system", "sla", "suspect", "service" or "custom"
    drift: bool = False  # histogram buckets drawn as distribution drift (PSI)
    selectors: tuple[str, ...] = ()  # a "fixed" panel's selectors
    rate: bool = False  # a counter, drawn as its per-second rate
    factor: float = 1.0  # multiplies values into the unit (e.g. MiB -> B)
    optional: bool = False  # only some servers have it: left out without a note


PANELS: tuple[Panel, ...] = (
    Panel("qps", "QPS", "req/s", ("model_requests_per_second",), "model", "model"),
    Panel(
        "latency",
        "Latency p50 / p95 / p99",
        "ms",
        ("model_latency_p50_ms", "model_latency_p95_ms", "model_latency_p99_ms"),
        "model",
        "model",
    ),
    Panel(  # LLM servers (vLLM, OpenTelemetry's gen_ai metrics)
        "ttft",
        "Time to first token p50 / p95 / p99",
        "ms",
        tuple(f"model_time_to_first_token_{p}_ms" for p in ("p50", "p95", "p99")),
        "model",
        "model",
        optional=True,
    ),
    Panel(
        "itl",
        "Inter-token latency p50 / p95 / p99",
        "ms",
        tuple(f"model_inter_token_latency_{p}_ms" for p in ("p50", "p95", "p99")),
        "model",
        "model",
        optional=True,
    ),
    Panel("batch", "Mean batch size", "requests", ("model_batch_size_mean",), "model", "model"),
    Panel("queue", "Queue length", "requests", ("model_queue_length",), "model", "model"),
    Panel("errors", "Error rate", "fraction", ("model_error_rate",), "model", "model"),
    Panel("timeouts", "Timeout rate", "fraction", ("model_timeout_rate",), "model", "model"),
    Panel(
        "input_drift",
        "Input-length drift (PSI vs the view's first quarter)",
        "PSI",
        ("model_input_length_bucket",),
        "model",
        "model",
        drift=True,
    ),
    Panel(
        "score_drift",
        "Score drift (PSI vs the view's first quarter)",
        "PSI",
        ("model_score_bucket",),
        "model",
        "model",
        drift=True,
    ),
    Panel("cpu", "CPU", "%", ("node_cpu_utilization_percent",), "host", "system"),
    Panel("memory", "Memory used", "B", ("node_memory_used_bytes",), "host", "system"),
    Panel("gpu_util", "GPU utilization", "%", ("gpu_utilization_percent",), "gpu", "system"),
    Panel("gpu_mem", "GPU memory used", "B", ("gpu_memory_used_bytes",), "gpu", "system"),
    Panel("gpu_temp", "GPU temperature", "°C", ("gpu_temperature_celsius",), "gpu", "system"),
    Panel("disk", "Disk IO busy", "%", ("node_disk_io_utilization_percent",), "host", "system"),
    Panel(
        "network",
        "Network receive / transmit",
        "B/s",
        ("node_network_receive_bytes_per_second", "node_network_transmit_bytes_per_second"),
        "host",
        "system",
    ),
    Panel(
        "restarts",
        "Container restarts",
        "total",
        ("container_restarts_total",),
        "instance",
        "system",
    ),
)


def panel_selectors(
    panel: Panel, *, model: str | None, instances: list[str], hosts: list[str], gpus: list[str]
) -> list[str]:
    """Return the selectors of one panel for the model's instances and hosts (none: none)."""
    if panel.scope == "fixed":
        return list(panel.selectors)
    if panel.scope == "model":
        if not model and not instances:
            return []
        labels = {"model": [model] if model else [], "instance": instances}
    elif panel.scope == "instance":
        labels = {"instance": instances} if instances else {"host": hosts}
    else:
        labels = {"host": hosts}
        if panel.scope == "gpu" and gpus:
            labels["gpu"] = gpus
    if not any(labels.values()):
        return []  # never the whole fleet's series
    return [selector(m, labels) for m in panel.metrics]


def model_scope(topology: dict, model: str | None) -> tuple[list[str], list[str]]:
    """Return the instances serving a model and the hosts they run on, from the topology."""
    if not model:
        return [], []
    edges = [e for e in topology.get("edges") or [] if e.get("from") and e.get("to")]
    instances = sorted(
        e["from"].removeprefix("instance:")
        for e in edges
        if e.get("kind") == "serves" and e["to"] == f"model:{model}"
    )
    hosts = sorted(
        {
            e["to"].removeprefix("host:")
            for e in edges
            if e.get("kind") == "runs_on" and e["from"].removeprefix("instance:") in instances
        }
    )
    return instances, hosts


def models_of(topology: dict, slas: list[dict]) -> list[str]:
    """Return the model names known from the topology and the SLAs."""
    names = {
        str(n.get("id", "")).removeprefix("model:")
        for n in topology.get("nodes") or []
        if n.get("kind") == "model"
    }
    names |= {str((s.get("labels") or {}).get("model") or "") for s in slas}
    return sorted(n for n in names if n)
