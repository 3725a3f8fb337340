"""Decode a Prometheus remote-write 1.0 WriteRequest into an ingest batch.

Samples go through the same checks as ``/api/v1/ingest`` (``collector.schema.parse_series``).
Stale markers (the NaN with bits 0x7ff0000000000002 that Prometheus writes when a series
disappears) are not data points: they come apart in ``markers``, stored as the times the
series stopped, so a query after one no longer finds the series (as in Prometheus). Other
NaN and +-Inf samples are skipped, since the store holds finite numbers only; both kinds
are counted in the result.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import Unpack

from google.protobuf.message import DecodeError

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
from correlator.receivers.remote_pb2 import WriteRequest  # type: ignore[attr-defined]  # protoc-built

STALE_NAN = 0x7FF0000000000002  # Prometheus' staleness marker (value.StaleNaN)
_BITS = struct.Struct("<d")
_AS_INT = struct.Struct("<Q")
NAN = math.nan
_NAME_VALUE = attrgetter("name", "value")


@dataclass(slots=True)
class Decoded:
    """A write request as a batch, with what was skipped."""

    batch: Batch
    markers: list[SeriesBatch] = field(default_factory=list)  # staleness markers per series
    stale: int = 0
    non_finite: int = 0
    histograms: int = 0


def is_stale(value: float) -> bool:
    """Return whether a sample value is Prometheus' staleness marker."""
    return _AS_INT.unpack(_BITS.pack(value))[0] == STALE_NAN


def _skip(out: Decoded, stamps: list[float], values: list[float], marks: list[float]) -> None:
    """Keep the stale markers' times in ``marks``; count them and the other non-finite values."""
    for t, v in zip(stamps, values, strict=True):
        if math.isnan(v) and is_stale(v):
            marks.append(t)
            out.stale += 1
        else:
            out.non_finite += 1


def _labels(pairs, path: str) -> tuple[str, dict[str, str]]:
    labels: dict[str, str] = {}
    for label in pairs:
        if label.name in labels:
            raise BatchError(f"{path}.labels", f"label {label.name[:80]!r} appears twice")
        labels[label.name] = label.value
    name = labels.pop("__name__", "")
    if not name:
        raise BatchError(f"{path}.labels", "no __name__ label (the metric name)")
    # As in Prometheus, a label with an empty value is the same as no label.
    return name, {k: v for k, v in labels.items() if v}


def decode_write_request(body: bytes, **bounds: Unpack[BatchBounds]) -> Decoded:
    """Return the batch a serialised WriteRequest holds; BatchError names the first bad field.

    ``not_after`` refuses samples stamped then or later, as ``parse_series`` does.
    """
    max_series = bounds.get("max_series", MAX_SERIES_PER_BATCH)
    max_samples = bounds.get("max_samples", MAX_SAMPLES_PER_BATCH)
    try:
        request = WriteRequest.FromString(body)
    except DecodeError as exc:
        raise BatchError("body", f"not a remote-write WriteRequest protobuf: {exc}") from exc
    total = sum(len(ts.samples) for ts in request.timeseries)
    if total > max_samples:
        raise BatchError("timeseries", f"{total} samples exceed the limit of {max_samples}")
    # Prometheus sends a sample per entry: entries with the same labels make one series.
    groups: dict[tuple, tuple[int, list[float], list[float], list[float]]] = {}
    out = Decoded(Batch(series=[]))
    for i, entry in enumerate(request.timeseries):
        if entry.histograms:
            out.histograms += len(entry.histograms)
        key = tuple(map(_NAME_VALUE, entry.labels))
        group = groups.get(key)
        if group is None:
            if len(groups) >= max_series:
                raise BatchError("timeseries", f"more than {max_series} series in one request")
            group = groups[key] = (i, [], [], [])
        samples = entry.samples
        if len(samples) == 1:  # how Prometheus sends: one sample per entry
            sample = samples[0]
            value = sample.value
            if math.isfinite(value):
                group[1].append(sample.timestamp / 1000.0)
                group[2].append(value)
            else:
                _skip(out, [sample.timestamp / 1000.0], [value], group[3])
            continue
        values = [s.value for s in samples]
        stamps = [s.timestamp / 1000.0 for s in samples]
        if not math.isfinite(sum(values)):
            bad = [(t, v) for t, v in zip(stamps, values, strict=True) if not math.isfinite(v)]
            _skip(out, [t for t, _ in bad], [v for _, v in bad], group[3])
            kept = [(t, v) for t, v in zip(stamps, values, strict=True) if math.isfinite(v)]
            stamps, values = [t for t, _ in kept], [v for _, v in kept]
        group[1].extend(stamps)
        group[2].extend(values)
    check = partial(parse_series, **series_bounds(bounds))
    for first, stamps, values, marks in groups.values():
        if not stamps and not marks:
            continue
        path = f"timeseries[{first}]"
        name, labels = _labels(request.timeseries[first].labels, path)
        if stamps:
            raw = {"name": name, "labels": labels, "timestamps": stamps, "values": values}
            out.batch.series.append(check(raw, path))
        if marks:
            raw = {
                "name": name,
                "labels": labels,
                "timestamps": marks,
                "values": [NAN] * len(marks),
            }
            out.markers.append(check(raw, path, allow_non_finite=True))
    return out
