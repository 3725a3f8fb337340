"""Aggregation of individual inference requests into the model-side vocabulary.

Shared by the in-process probe and the inference-log tail: each window of
requests becomes QPS, latency percentiles from a DDSketch (relative error
``LATENCY_RELATIVE_ACCURACY``; mergeable across windows and workers), mean
batch size, error/timeout/fallback rates, and cumulative fixed-bucket
histograms of input length, score and latency.
"""

from __future__ import annotations

from collections.abc import Iterable

from ddsketch import DDSketch

from collector.buckets import (
    INPUT_LENGTH_BOUNDS,
    LATENCY_MS_BOUNDS,
    SCORE_BOUNDS,
    CumulativeHistogram,
)
from collector.reading import Reading

LATENCY_RELATIVE_ACCURACY = 0.01
QUANTILES = (
    (0.5, "model_latency_p50_ms"),
    (0.95, "model_latency_p95_ms"),
    (0.99, "model_latency_p99_ms"),
)
STATUSES = ("ok", "error", "timeout", "fallback")

# One request: (latency_ms, status, batch_size, input_length, score); None = unknown.
Request = tuple[float | None, str, float | None, float | None, float | None]


class RequestStats:
    """Turn windows of requests into samples; histograms stay cumulative."""

    def __init__(self, labels: dict[str, str]):
        self.labels = dict(labels)
        self.input_length = CumulativeHistogram(INPUT_LENGTH_BOUNDS)
        self.score = CumulativeHistogram(SCORE_BOUNDS)
        self.latency = CumulativeHistogram(LATENCY_MS_BOUNDS)
        self.requests_total = dict.fromkeys(STATUSES, 0)
        self.last_sketch: DDSketch | None = None

    def window(self, requests: Iterable[Request], seconds: float) -> Reading:
        """Return the samples of one window of ``seconds`` holding ``requests``."""
        sketch = DDSketch(LATENCY_RELATIVE_ACCURACY)
        n = 0
        counts = dict.fromkeys(STATUSES, 0)
        batch_sum, batch_n = 0.0, 0
        for latency, status, batch, length, score in requests:
            n += 1
            counts[status if status in counts else "error"] += 1
            if latency is not None and latency >= 0:
                sketch.add(latency)
                self.latency.observe(latency)
            if batch is not None:
                batch_sum += batch
                batch_n += 1
            if length is not None:
                self.input_length.observe(length)
            if score is not None:
                self.score.observe(score)
        for status, count in counts.items():
            self.requests_total[status] += count
        self.last_sketch = sketch
        return self._reading(n, counts, sketch, batch_sum, batch_n, seconds)

    def _reading(self, n, counts, sketch, batch_sum, batch_n, seconds) -> Reading:
        out, labels = Reading(), self.labels
        out.add("model_requests_per_second", n / seconds if seconds > 0 else 0.0, labels)
        if n:
            out.add("model_error_rate", counts["error"] / n, labels)
            out.add("model_timeout_rate", counts["timeout"] / n, labels)
            out.add("model_fallback_rate", counts["fallback"] / n, labels)
        if sketch.count:
            for q, name in QUANTILES:
                out.add(name, sketch.get_quantile_value(q), labels)
        if batch_n:
            out.add("model_batch_size_mean", batch_sum / batch_n, labels)
        for status, total in self.requests_total.items():
            out.add("model_requests_total", total, {**labels, "status": status})
        for name, hist in (
            ("model_input_length", self.input_length),
            ("model_score", self.score),
            ("model_latency_ms", self.latency),
        ):
            if not hist.total:
                continue
            for le, count in hist.cumulative():
                out.add(f"{name}_bucket", count, {**labels, "le": le})
            out.add(f"{name}_count", hist.total, labels)
            out.add(f"{name}_sum", hist.sum, labels)
        return out
