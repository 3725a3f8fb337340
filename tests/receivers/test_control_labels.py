"""Label values holding control characters are refused by every receiver, in its own shape.

JSON ingest answers 422 with ``{"detail": {"field", "reason"}}``, remote write 400 with the
same detail, OTLP 400 with a google.rpc.Status in the request's encoding; nothing is stored.
"""

from __future__ import annotations

import json

import pytest
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from tests.helpers import count_rows
from tests.receivers.test_otlp_api import JSON, NS, PROTOBUF, export
from tests.receivers.wire import RW_HEADERS, snappy, write_request

T = 1_700_000_000
RED = "\x1b[31m"  # a terminal escape: turns what follows red


def _gauge(attributes: list[dict]) -> dict:
    point = {"timeUnixNano": str(NS), "asDouble": 1.0, "attributes": attributes}
    return {"name": "queue.depth", "gauge": {"dataPoints": [point]}}


@pytest.mark.parametrize("value", [RED, "a\x9bb", "tab\there", "a\x00b"], ids=repr)
def test_remote_write_refuses_a_control_character_in_a_label_value(client, value):
    request = write_request([({"__name__": "up", "host": "h1", "pod": value}, [(1.0, T * 1000)])])
    resp = client.post("/api/v1/write", content=snappy(request), headers=RW_HEADERS)
    assert resp.status_code == 400, resp.text
    detail = resp.json()["detail"]
    assert detail["field"] == "timeseries[0].labels.pod", detail
    assert "control characters" in detail["reason"] or "NUL" in detail["reason"], detail
    assert count_rows(client.engine) == 0 and count_rows(client.engine, "series") == 0


def test_otlp_json_refuses_a_point_attribute_holding_an_escape(client):
    gauge = _gauge([{"key": "pod", "value": {"stringValue": RED}}])
    resp = client.post("/v1/metrics", content=json.dumps(export(gauge)), headers=JSON)
    assert resp.status_code == 400, resp.text
    status = json_format.Parse(resp.text, Status())
    assert status.code == 3  # INVALID_ARGUMENT
    field, _, reason = status.message.partition(": ")
    assert field.endswith(".gauge.dataPoints[0].labels.pod"), status.message
    assert "control characters (U+001B" in reason, status.message
    assert count_rows(client.engine) == 0 and count_rows(client.engine, "series") == 0


def test_otlp_protobuf_refuses_a_resource_attribute_holding_an_escape(client):
    doc = export(_gauge([]))
    doc["resourceMetrics"][0]["resource"]["attributes"][2]["value"]["stringValue"] = f"n{RED}1"
    body = json_format.ParseDict(doc, ExportMetricsServiceRequest()).SerializeToString()
    resp = client.post("/v1/metrics", content=body, headers=PROTOBUF)
    assert resp.status_code == 400, resp.text
    assert resp.headers["content-type"] == PROTOBUF["Content-Type"]
    status = Status.FromString(resp.content)
    assert status.message.endswith("must not contain control characters (U+001B at character 1)")
    assert ".labels.host: " in status.message, status.message
    assert count_rows(client.engine) == 0 and count_rows(client.engine, "series") == 0


def test_json_ingest_refuses_an_escape_in_a_label_value(client):
    series = {"name": "up", "labels": {"pod": RED}, "timestamps": [T], "values": [1.0]}
    resp = client.post("/api/v1/ingest", json={"series": [series]})
    assert resp.status_code == 422, resp.text
    detail = resp.json()["detail"]
    assert detail["field"] == "series[0].labels.pod" and "control" in detail["reason"], detail
    assert count_rows(client.engine) == 0


def test_labels_printable_beyond_ascii_are_still_stored(client):
    value = "模型-α\u00a0β"  # letters of any script and a no-break space are not control characters
    request = write_request([({"__name__": "up", "pod": value}, [(1.0, T * 1000)])])
    resp = client.post("/api/v1/write", content=snappy(request), headers=RW_HEADERS)
    assert resp.status_code == 200, resp.text
    found = client.get("/api/v1/series", params={"match[]": "up", "start": 0, "end": 2e9})
    assert found.json()["data"] == [{"__name__": "up", "pod": value}]
