"""OTLP metric names and attributes as Prometheus' OTLP translator turns them into names."""

from __future__ import annotations

import pytest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue

from correlator.receivers.otlp_names import bound_text, label_name, labels_of, metric_name

NAMES = [
    (("http.server.request.duration", "s"), {}, "http_server_request_duration_seconds"),
    (("process.cpu.time", "s"), {"counter": True}, "process_cpu_time_seconds_total"),
    (("requests", "{request}"), {"counter": True}, "requests_total"),
    (("requests.total", "1"), {"counter": True}, "requests_total"),
    (("gpu.utilization", "1"), {"gauge": True}, "gpu_utilization_ratio"),
    (("network.io", "By/s"), {}, "network_io_bytes_per_second"),
    (("latency_seconds", "s"), {}, "latency_seconds"),
    (("temp", "Cel"), {"gauge": True}, "temp_celsius"),
    (("queue--depth", ""), {"gauge": True}, "queue_depth"),
    (("2xx.responses", ""), {"counter": True}, "_2xx_responses_total"),
    (("memory", "MiBy"), {"gauge": True}, "memory_mebibytes"),
    (("load", "%"), {"gauge": True}, "load_percent"),
]


@pytest.mark.parametrize(("args", "kind", "expected"), NAMES)
def test_metric_names(args, kind, expected):
    assert metric_name(*args, **kind) == expected


def test_label_names_and_values():
    assert label_name("http.route") == "http_route"
    assert label_name("2fa") == "key_2fa"
    assert label_name("_private") == "key_private"
    assert label_name("__name__") == "key__name__"
    attrs = [
        KeyValue(key="a.b", value=AnyValue(string_value="x")),
        KeyValue(key="a_b", value=AnyValue(string_value="y")),
        KeyValue(key="ok", value=AnyValue(bool_value=True)),
        KeyValue(key="n", value=AnyValue(int_value=42)),
        KeyValue(key="f", value=AnyValue(double_value=2.0)),
        KeyValue(key="empty", value=AnyValue(string_value="")),
        KeyValue(
            key="list",
            value=AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=1)])),
        ),
    ]
    assert labels_of(attrs) == {
        "a_b": "x;y",  # colliding keys join their values in key order
        "ok": "true",
        "n": "42",
        "f": "2",
        "list": "[1]",
    }
    assert labels_of(attrs, only={"a.b": "ab"}) == {"ab": "x"}


def test_bucket_bounds_as_prometheus_writes_them():
    assert [bound_text(b) for b in (0.005, 10.0, 1e-05, 2500.0)] == [
        "0.005",
        "10",
        "0.00001",
        "2500",
    ]
