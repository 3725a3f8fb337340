"""Build remote-write and OTLP request bodies for the tests."""

from __future__ import annotations

import struct

import cramjam

from correlator.receivers.remote_pb2 import WriteRequest

STALE = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000002))[0]
RW_HEADERS = {
    "Content-Type": "application/x-protobuf",
    "Content-Encoding": "snappy",
    "X-Prometheus-Remote-Write-Version": "0.1.0",
}


def write_request(series: list[tuple[dict[str, str], list[tuple[float, int]]]]) -> WriteRequest:
    """Return a WriteRequest of (labels with __name__, [(value, unix ms)]) entries."""
    request = WriteRequest()
    for labels, samples in series:
        entry = request.timeseries.add()
        for name in sorted(labels):
            entry.labels.add(name=name, value=labels[name])
        for value, ms in samples:
            entry.samples.add(value=value, timestamp=ms)
    return request


def snappy(message) -> bytes:
    """Return a message serialised and snappy block-compressed, as Prometheus sends it."""
    return bytes(cramjam.snappy.compress_raw(message.SerializeToString()))
