"""Prometheus remote-write 1.0 ``WriteRequest`` in protobuf wire format, encoded by hand.

The agent needs four messages of Prometheus' ``prompb`` and no protobuf runtime::

    WriteRequest {repeated TimeSeries timeseries = 1;}
    TimeSeries   {repeated Label labels = 1; repeated Sample samples = 2;}
    Label        {string name = 1; string value = 2;}
    Sample       {double value = 1; int64 timestamp = 2;}   // unix milliseconds

Fields at their proto3 default are left out, as protobuf's serialiser does, so the
bytes equal what the generated classes would write.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence

from collector.schema import SeriesBatch

_DOUBLE = struct.Struct("<d")
_ZERO = bytes(8)
_TIMESERIES = b"\x0a"  # WriteRequest.timeseries: field 1, length-delimited
_LABEL = b"\x0a"  # TimeSeries.labels: field 1, length-delimited
_SAMPLE = b"\x12"  # TimeSeries.samples: field 2, length-delimited
_NAME = b"\x0a"  # Label.name: field 1, length-delimited
_VALUE = b"\x12"  # Label.value: field 2, length-delimited
_SAMPLE_VALUE = b"\x09"  # Sample.value: field 1, 64-bit
_SAMPLE_TS = b"\x10"  # Sample.timestamp: field 2, varint


def varint(n: int) -> bytes:
    """Return ``n`` as a protobuf varint (a negative int64 takes ten bytes)."""
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _delimited(tag: bytes, payload: bytes) -> bytes:
    return tag + varint(len(payload)) + payload


def series_labels(name: str, labels: Mapping[str, str]) -> list[tuple[str, str]]:
    """Return the label pairs remote write sends: ``__name__`` added, no empty values, sorted."""
    pairs = {k: v for k, v in labels.items() if v and k != "__name__"}
    pairs["__name__"] = name
    return sorted(pairs.items())


def _label(name: str, value: str) -> bytes:
    return _delimited(_LABEL, _delimited(_NAME, name.encode()) + _delimited(_VALUE, value.encode()))


def _sample(value: float, ms: int) -> bytes:
    packed = _DOUBLE.pack(value)
    body = (_SAMPLE_VALUE + packed if packed != _ZERO else b"") + (
        _SAMPLE_TS + varint(ms) if ms else b""
    )
    return _delimited(_SAMPLE, body)


def label_fields(name: str, labels: Mapping[str, str]) -> bytes:
    """Return a ``TimeSeries``' label fields, to encode once for every write of a series."""
    return b"".join(_label(k, v) for k, v in series_labels(name, labels))


def encode_samples(labels: bytes, timestamps: Sequence[float], values: Sequence[float]) -> bytes:
    """Return one ``TimeSeries`` field from its ``label_fields``; samples in time order."""
    order = sorted(range(len(timestamps)), key=timestamps.__getitem__)
    parts = [_sample(float(values[i]), round(timestamps[i] * 1000)) for i in order]
    return _delimited(_TIMESERIES, labels + b"".join(parts))


def encode_series(
    name: str, labels: Mapping[str, str], timestamps: Sequence[float], values: Sequence[float]
) -> bytes:
    """Return one ``TimeSeries`` field of a WriteRequest; samples in time order, NaN kept."""
    return encode_samples(label_fields(name, labels), timestamps, values)


def encode_write_request(series: Iterable[SeriesBatch]) -> bytes:
    """Return the serialised ``WriteRequest`` of every series that has samples."""
    return b"".join(
        encode_series(s.name, s.labels, s.timestamps, s.values) for s in series if s.timestamps
    )
