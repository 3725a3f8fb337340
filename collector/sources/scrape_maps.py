"""Mappings from Triton, vLLM and TorchServe metric names to the causeline vocabulary.

Each mapper turns one scrape (a list of ``(name, labels, value)``) plus the
seconds since the previous scrape into vocabulary samples. Counters become
per-window increases through ``CounterDeltas`` (reset-safe), so the first
scrape yields only gauges.
"""

from __future__ import annotations

from collections import defaultdict
from typing import cast

from collector.buckets import INPUT_LENGTH_BOUNDS, le_text
from collector.counters import CounterDeltas
from collector.histograms import bucket_quantile, rebucket
from collector.reading import Reading
from collector.requests import QUANTILES

Scraped = list[tuple[str, dict[str, str], float]]
PERCENTILE_NAMES = {str(q): name for q, name in QUANTILES}
# vLLM's token latencies: (its histogram names, newest first; the vocabulary's prefix).
TOKEN_LATENCIES = (
    (("vllm:time_to_first_token_seconds",), "model_time_to_first_token"),
    (
        ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
        "model_inter_token_latency",
    ),
)


class Mapper:
    """Base: group samples by model and turn counters into increases."""

    model_label = "model"
    version_label: str | None = None

    def __init__(self, labels: dict[str, str]):
        self.labels = labels
        self.deltas = CounterDeltas()

    def _out_labels(self, model: str, version: str | None) -> dict[str, str]:
        out = {"model": model, **self.labels}
        if version and version != "default":
            out["version"] = version
        return out

    def _group(self, scraped: Scraped) -> dict[tuple, list]:
        groups: dict[tuple, list] = defaultdict(list)
        for name, labels, value in scraped:
            model = labels.get(self.model_label)
            if model is not None:
                version = labels.get(self.version_label) if self.version_label else None
                groups[(model, version)].append((name, labels, value))
        return groups

    def _inc(self, key: tuple, rows: list, name: str) -> float | None:
        values = [v for n, _, v in rows if n == name]
        if not values:
            return None
        return self.deltas.increase((key, name), sum(values))

    def map(self, scraped: Scraped, seconds: float) -> Reading:
        """Return the vocabulary samples of one scrape."""
        out = Reading()
        for (model, version), rows in self._group(scraped).items():
            self.map_model((model, version), rows, self._out_labels(model, version), seconds, out)
        return out

    def map_model(self, key, rows, labels, seconds, out: Reading) -> None:
        """Add the samples of one model."""
        raise NotImplementedError


def _gauge(rows: list, name: str) -> float | None:
    values = [v for n, _, v in rows if n == name]
    return sum(values) if values else None


class TritonMapper(Mapper):
    """NVIDIA Triton Inference Server (``:8002/metrics``)."""

    version_label = "version"

    def map_model(self, key, rows, labels, seconds, out: Reading) -> None:
        """Add QPS, error rate, batch size, queue and latency of one Triton model."""
        ok = self._inc(key, rows, "nv_inference_request_success")
        failed = self._inc(key, rows, "nv_inference_request_failure") or 0.0
        if ok is not None and seconds > 0:
            n = ok + failed
            out.add("model_requests_per_second", n / seconds, labels)
            if n:
                out.add("model_error_rate", failed / n, labels)
        inferences = self._inc(key, rows, "nv_inference_count")
        executions = self._inc(key, rows, "nv_inference_exec_count")
        if inferences is not None and executions:
            out.add("model_batch_size_mean", inferences / executions, labels)
        for counter, metric in (
            ("nv_inference_request_duration_us", "model_latency_mean_ms"),
            ("nv_inference_queue_duration_us", "model_queue_time_mean_ms"),
        ):
            total_us = self._inc(key, rows, counter)
            if total_us is not None and ok:
                out.add(metric, total_us / ok / 1000.0, labels)
        pending = _gauge(rows, "nv_inference_pending_request_count")
        if pending is not None:
            out.add("model_queue_length", pending, labels)
        for name, row_labels, value in rows:
            if name == "nv_inference_request_summary_us" and value == value:
                quantile_metric = PERCENTILE_NAMES.get(row_labels.get("quantile", ""))
                if quantile_metric:
                    out.add(quantile_metric, value / 1000.0, labels)


class VllmMapper(Mapper):
    """vLLM's OpenAI-compatible server (``/metrics``, names prefixed ``vllm:``)."""

    model_label = "model_name"

    def _buckets(self, key, rows, name: str, *, delta: bool) -> list[tuple[float, float]]:
        out: list[tuple[float, float | None]] = []
        complete = True
        for n, row_labels, value in rows:
            if n == f"{name}_bucket":
                le = float(row_labels["le"])
                if delta:
                    inc = self.deltas.increase((key, n, le), value)
                    complete = complete and inc is not None
                    out.append((le, inc))
                else:
                    out.append((le, value))
        # complete: no increase was None
        return cast(list[tuple[float, float]], out) if complete else []

    def map_model(self, key, rows, labels, seconds, out: Reading) -> None:
        """Add QPS, queue, running batch, latency percentiles and prompt lengths."""
        self._token_latencies(key, rows, labels, out)
        done = self._inc(key, rows, "vllm:request_success_total")
        if done is not None and seconds > 0:
            out.add("model_requests_per_second", done / seconds, labels)
        waiting = _gauge(rows, "vllm:num_requests_waiting")
        if waiting is not None:
            out.add("model_queue_length", waiting, labels)
        running = _gauge(rows, "vllm:num_requests_running")
        if running is not None:
            out.add("model_batch_size_mean", running, labels)
        window = self._buckets(key, rows, "vllm:e2e_request_latency_seconds", delta=True)
        for q, metric in QUANTILES:
            value = bucket_quantile(q, window)
            if value is not None:
                out.add(metric, value * 1000.0, labels)
        prompt = self._buckets(key, rows, "vllm:request_prompt_tokens", delta=False)
        if prompt:
            counts = rebucket(INPUT_LENGTH_BOUNDS, prompt)
            les = [le_text(b) for b in INPUT_LENGTH_BOUNDS] + ["+Inf"]
            for le, count in zip(les, counts, strict=True):
                out.add("model_input_length_bucket", count, {**labels, "le": le})

    def _token_latencies(self, key, rows, labels, out: Reading) -> None:
        """Add time-to-first-token and inter-token latency percentiles (ms) of the window."""
        present = {n for n, _, _ in rows}
        for names, prefix in TOKEN_LATENCIES:
            name = next((n for n in names if f"{n}_bucket" in present), None)
            if name is None:
                continue
            window = self._buckets(key, rows, name, delta=True)
            for q, metric in QUANTILES:
                value = bucket_quantile(q, window)
                if value is not None:
                    suffix = metric.removeprefix("model_latency_")  # p50_ms, p95_ms, p99_ms
                    out.add(f"{prefix}_{suffix}", value * 1000.0, labels)


class TorchServeMapper(Mapper):
    """TorchServe's metrics API (``:8082/metrics``, ``metrics_mode=prometheus``)."""

    model_label = "model_name"
    version_label = "model_version"

    def map_model(self, key, rows, labels, seconds, out: Reading) -> None:
        """Add QPS and mean inference and queue latency of one TorchServe model."""
        n = self._inc(key, rows, "ts_inference_requests_total")
        if n is not None and seconds > 0:
            out.add("model_requests_per_second", n / seconds, labels)
        for counter, metric in (
            ("ts_inference_latency_microseconds", "model_latency_mean_ms"),
            ("ts_queue_latency_microseconds", "model_queue_time_mean_ms"),
        ):
            total_us = self._inc(key, rows, counter)
            if total_us is not None and n:
                out.add(metric, total_us / n / 1000.0, labels)


class CauselineMapper(Mapper):
    """Another exporter already speaking the vocabulary (e.g. a probe's /metrics)."""

    def map(self, scraped: Scraped, seconds: float) -> Reading:
        """Pass ``model_*`` samples through, adding the configured labels."""
        out = Reading()
        for name, labels, value in scraped:
            if name.startswith("model_"):
                out.add(name, value, {**labels, **self.labels})
        return out


MAPPERS = {
    "triton": TritonMapper,
    "vllm": VllmMapper,
    "torchserve": TorchServeMapper,
    "causeline": CauselineMapper,
}
