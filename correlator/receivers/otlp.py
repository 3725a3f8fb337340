"""Decode an OTLP metrics export (protobuf or JSON) into ingest series.

Gauges and cumulative sums become series as they are. Delta sums (and delta histograms) become
increments that the store adds onto the series' stored total, so every stored series is a
level or a cumulative counter. Explicit-bucket histograms become a Prometheus histogram family
(``_bucket`` with cumulative ``le`` counts, ``_sum``, ``_count``); summaries become
``{quantile=...}`` gauges with ``_sum`` and ``_count``. A point flagged "no recorded value"
(the series stopped) becomes a staleness marker of each of its series, as Prometheus' own
OTLP receiver writes (delta points excepted: their running total holds). NaN or infinite
values, points without a value and exponential histograms are rejected (counted in the
response's partial success). Names and labels: ``otlp_names``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Unpack

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from collector.schema import (
    MAX_SAMPLES_PER_BATCH,
    MAX_SERIES_PER_BATCH,
    Batch,
    BatchBounds,
    BatchError,
    SeriesBatch,
    parse_series,
    series_bounds,
)
from correlator.receivers.otlp_names import (
    RESOURCE_LABELS,
    bound_text,
    labels_of,
    metric_name,
)

NO_RECORDED_VALUE = 1  # DataPointFlags.DATA_POINT_FLAGS_NO_RECORDED_VALUE_MASK
DELTA = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA
CUMULATIVE = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE


@dataclass(slots=True)
class Decoded:
    """An export as series: levels and totals in ``batch``, increments in ``deltas``."""

    batch: Batch
    deltas: list[SeriesBatch]
    markers: list[SeriesBatch] = field(default_factory=list)  # no recorded value: stopped
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    delta_paths: list[str] = field(default_factory=list)  # each delta's metric, for errors

    def reject(self, count: int, reason: str) -> None:
        """Count data points refused, remembering why."""
        self.rejected += count
        if reason not in self.reasons:
            self.reasons.append(reason)


def parse_request(body: bytes, *, is_json: bool) -> ExportMetricsServiceRequest:
    """Return the export request from protobuf or OTLP/JSON bytes; BatchError when it is not."""
    request = ExportMetricsServiceRequest()
    try:
        if is_json:
            # OTLP/JSON is protobuf's JSON mapping; unknown fields must be ignored.
            json_format.Parse(body.decode("utf-8"), request, ignore_unknown_fields=True)
        else:
            request.ParseFromString(body)
    except (DecodeError, json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        kind = "OTLP/JSON" if is_json else "OTLP protobuf"
        reason = str(exc)[:300] if not isinstance(exc, RecursionError) else "nested too deeply"
        raise BatchError("body", f"not an {kind} ExportMetricsServiceRequest: {reason}") from exc
    return request


class _Series:
    """Points gathered per (name, labels) while walking an export, within the limits."""

    def __init__(self, out: Decoded, max_series: int, max_samples: int):
        self.groups: dict[tuple, tuple[str, bool, str, dict, list, list]] = {}
        self.stops: dict[tuple, tuple[str, str, dict, list]] = {}
        self.out, self.max_series, self.max_samples, self.points = out, max_series, max_samples, 0

    def add(self, path: str, name: str, labels: dict, t: float, v: float, *, delta: bool):
        if not math.isfinite(v):
            self.out.reject(1, f"{name}: NaN or infinite values are not stored")
            return
        key = (delta, name, tuple(sorted(labels.items())))
        group = self.groups.get(key)
        if group is None:
            if len(self.groups) >= self.max_series:
                raise BatchError("body", f"more than {self.max_series} series in one request")
            group = self.groups[key] = (path, delta, name, labels, [], [])
        self.points += 1
        if self.points > self.max_samples:
            raise BatchError("body", f"more than {self.max_samples} samples in one request")
        group[4].append(t)
        group[5].append(v)

    def stop(self, path: str, name: str, labels: dict, t: float) -> None:
        """Note a point flagged as having no recorded value: the series stopped at ``t``."""
        key = (name, tuple(sorted(labels.items())))
        group = self.stops.get(key)
        if group is None:
            if len(self.stops) >= self.max_series:
                raise BatchError("body", f"more than {self.max_series} series in one request")
            group = self.stops[key] = (path, name, labels, [])
        self.points += 1
        if self.points > self.max_samples:
            raise BatchError("body", f"more than {self.max_samples} samples in one request")
        group[3].append(t)


def _seconds(point, path: str) -> float:
    if not point.time_unix_nano:
        raise BatchError(f"{path}.timeUnixNano", "must be set (unix nanoseconds)")
    return point.time_unix_nano / 1e9


def _temporality(data, path: str) -> bool:
    """Return True for delta; BatchError when the temporality is unset."""
    if data.aggregation_temporality not in (DELTA, CUMULATIVE):
        raise BatchError(f"{path}.aggregationTemporality", "must be DELTA (1) or CUMULATIVE (2)")
    return data.aggregation_temporality == DELTA


def _numbers(acc: _Series, points, path: str, name: str, base: dict, *, delta: bool) -> None:
    for n, p in enumerate(points):
        where = f"{path}.dataPoints[{n}]"
        if p.flags & NO_RECORDED_VALUE:
            if not delta:  # a delta's total holds; a level or total stops, as a stale marker
                acc.stop(where, name, base | labels_from(p.attributes), _seconds(p, where))
            continue
        kind = p.WhichOneof("value")
        if kind is None:
            acc.out.reject(1, f"{name}: a number data point without a value")
            continue
        value = float(p.as_int) if kind == "as_int" else p.as_double
        labels = base | labels_from(p.attributes)
        acc.add(where, name, labels, _seconds(p, where), value, delta=delta)


def labels_from(attributes) -> dict[str, str]:
    """Return the labels of data point attributes."""
    return labels_of(attributes) if attributes else {}


def _histograms(acc: _Series, points, path: str, name: str, base: dict, *, delta: bool) -> None:
    for n, p in enumerate(points):
        where = f"{path}.dataPoints[{n}]"
        if p.flags & NO_RECORDED_VALUE:
            if not delta:
                _stop_all(acc, where, name, p, base, le=list(p.explicit_bounds))
            continue
        bounds, counts = list(p.explicit_bounds), list(p.bucket_counts)
        if counts and len(counts) != len(bounds) + 1:
            raise BatchError(
                f"{where}.bucketCounts",
                f"{len(counts)} bucket counts for {len(bounds)} bounds (must be bounds + 1)",
            )
        if not all(math.isfinite(b) for b in bounds) or any(
            b >= c for b, c in zip(bounds, bounds[1:], strict=False)
        ):
            raise BatchError(f"{where}.explicitBounds", "must be finite and strictly increasing")
        t, labels = _seconds(p, where), base | labels_from(p.attributes)
        running = 0
        for bound, count in zip(bounds, counts, strict=False):
            running += count
            le = labels | {"le": bound_text(bound)}
            acc.add(where, f"{name}_bucket", le, t, float(running), delta=delta)
        acc.add(where, f"{name}_bucket", labels | {"le": "+Inf"}, t, float(p.count), delta=delta)
        if p.HasField("sum"):
            acc.add(where, f"{name}_sum", labels, t, p.sum, delta=delta)
        acc.add(where, f"{name}_count", labels, t, float(p.count), delta=delta)


def _stop_all(
    acc: _Series,
    where: str,
    name: str,
    point,
    base: dict,
    *,
    le: list[float] | None = None,
    quantiles: list[float] | None = None,
) -> None:
    """Note that every series of a histogram (``le``) or summary point stopped."""
    t, labels = _seconds(point, where), base | labels_from(point.attributes)
    if le is not None:
        for bound in [*(bound_text(b) for b in le), "+Inf"]:
            acc.stop(where, f"{name}_bucket", labels | {"le": bound}, t)
    for q in quantiles or ():
        acc.stop(where, name, labels | {"quantile": bound_text(q)}, t)
    acc.stop(where, f"{name}_sum", labels, t)
    acc.stop(where, f"{name}_count", labels, t)


def _summaries(acc: _Series, points, path: str, name: str, base: dict) -> None:
    for n, p in enumerate(points):
        where = f"{path}.dataPoints[{n}]"
        if p.flags & NO_RECORDED_VALUE:
            _stop_all(acc, where, name, p, base, quantiles=[q.quantile for q in p.quantile_values])
            continue
        t, labels = _seconds(p, where), base | labels_from(p.attributes)
        for q in p.quantile_values:
            quantile = labels | {"quantile": bound_text(q.quantile)}
            acc.add(where, name, quantile, t, q.value, delta=False)
        acc.add(where, f"{name}_sum", labels, t, p.sum, delta=False)
        acc.add(where, f"{name}_count", labels, t, float(p.count), delta=False)


def _metric(acc: _Series, metric, path: str, base: dict) -> None:
    if not metric.name:
        raise BatchError(f"{path}.name", "metric name must not be empty")
    kind = metric.WhichOneof("data")
    if kind == "gauge":
        name = metric_name(metric.name, metric.unit, gauge=True)
        _numbers(acc, metric.gauge.data_points, f"{path}.gauge", name, base, delta=False)
    elif kind == "sum":
        delta = _temporality(metric.sum, f"{path}.sum")
        name = metric_name(metric.name, metric.unit, counter=metric.sum.is_monotonic)
        _numbers(acc, metric.sum.data_points, f"{path}.sum", name, base, delta=delta)
    elif kind == "histogram":
        delta = _temporality(metric.histogram, f"{path}.histogram")
        name = metric_name(metric.name, metric.unit)
        points = metric.histogram.data_points
        _histograms(acc, points, f"{path}.histogram", name, base, delta=delta)
    elif kind == "summary":
        name = metric_name(metric.name, metric.unit)
        _summaries(acc, metric.summary.data_points, f"{path}.summary", name, base)
    elif kind == "exponential_histogram":
        acc.out.reject(
            len(metric.exponential_histogram.data_points),
            f"{metric.name}: exponential histograms are not stored; export explicit buckets",
        )


def decode_metrics(request: ExportMetricsServiceRequest, **bounds: Unpack[BatchBounds]) -> Decoded:
    """Return the series of an export; BatchError names the first bad field.

    ``not_after`` refuses points stamped then or later, as ``parse_series`` does.
    """
    out = Decoded(Batch(series=[]), [])
    max_series = bounds.get("max_series", MAX_SERIES_PER_BATCH)
    acc = _Series(out, max_series, bounds.get("max_samples", MAX_SAMPLES_PER_BATCH))
    per_series = series_bounds(bounds)
    for i, rm in enumerate(request.resource_metrics):
        base = labels_of(rm.resource.attributes, only=RESOURCE_LABELS)
        for j, sm in enumerate(rm.scope_metrics):
            for k, metric in enumerate(sm.metrics):
                _metric(acc, metric, f"resourceMetrics[{i}].scopeMetrics[{j}].metrics[{k}]", base)
    for path, delta, name, labels, stamps, values in acc.groups.values():
        raw = {"name": name, "labels": labels, "timestamps": stamps, "values": values}
        series = parse_series(raw, path, **per_series)
        if delta:
            out.deltas.append(series)
            out.delta_paths.append(path.rpartition(".dataPoints[")[0] or path)
        else:
            out.batch.series.append(series)
    for path, name, labels, stamps in acc.stops.values():
        raw = {
            "name": name,
            "labels": labels,
            "timestamps": stamps,
            "values": [math.nan] * len(stamps),
        }
        out.markers.append(parse_series(raw, path, allow_non_finite=True, **per_series))
    return out
