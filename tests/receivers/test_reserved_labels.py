"""Label names starting with ``__`` are reserved: no push path stores one as a label."""

from __future__ import annotations

import json

import pytest

from tests.helpers import count_rows
from tests.receivers.test_otlp_api import JSON, NS, export
from tests.receivers.wire import RW_HEADERS, snappy, write_request

T = 1_700_000_000
HOST = {"host": "h1"}


def _series(name: str, labels: dict) -> dict:
    return {"name": name, "labels": labels, "timestamps": [T], "values": [1.0]}


def _names(client, match: str = '{host="h1"}') -> list[dict]:
    params = {"match[]": match, "start": 0, "end": 2e9}
    return client.get("/api/v1/series", params=params).json()["data"]


@pytest.mark.parametrize("label", ["__name__", "__meta_host", "__tmp"])
def test_json_ingest_refuses_a_reserved_label_naming_it(client, label):
    good = _series("requests_total", {"host": "h1"})
    bad = _series("latency_seconds", {"host": "h1", label: "other"})
    resp = client.post("/api/v1/ingest", json={"series": [good, bad]})
    assert resp.status_code == 422, resp.text
    detail = resp.json()["detail"]
    assert detail["field"] == f"series[1].labels.{label}", detail
    assert "reserved" in detail["reason"], detail
    assert count_rows(client.engine) == 0


def test_no_series_is_listed_under_a_name_it_was_not_sent_with(client):
    resp = client.post("/api/v1/ingest", json={"series": [_series("requests_total", HOST)]})
    assert resp.status_code == 200, resp.text
    bad = _series("latency_seconds", HOST | {"__name__": "other"})
    assert client.post("/api/v1/ingest", json={"series": [bad]}).status_code == 422
    assert _names(client) == [{"__name__": "requests_total", "host": "h1"}]


def test_remote_write_takes_name_as_the_metric_and_refuses_other_reserved_labels(client):
    ok = write_request([({"__name__": "up", "host": "h1"}, [(1.0, T * 1000)])])
    assert client.post("/api/v1/write", content=snappy(ok), headers=RW_HEADERS).status_code == 200
    assert _names(client) == [{"__name__": "up", "host": "h1"}]
    bad = write_request([({"__name__": "up", "host": "h1", "__meta_job": "x"}, [(1.0, T * 1000)])])
    resp = client.post("/api/v1/write", content=snappy(bad), headers=RW_HEADERS)
    assert resp.status_code == 400, resp.text
    detail = resp.json()["detail"]
    assert detail["field"].endswith(".labels.__meta_job") and "reserved" in detail["reason"]
    assert len(_names(client)) == 1


def test_otlp_attributes_never_become_reserved_labels(client):
    attributes = [
        {"key": "__name__", "value": {"stringValue": "other"}},
        {"key": "__meta", "value": {"stringValue": "x"}},
    ]
    point = {"timeUnixNano": str(NS), "asDouble": 1.0, "attributes": attributes}
    gauge = {"name": "queue.depth", "gauge": {"dataPoints": [point]}}
    resp = client.post("/v1/metrics", content=json.dumps(export(gauge)), headers=JSON)
    assert resp.status_code == 200, resp.text
    [found] = _names(client, '{service="ranker"}')
    assert found["__name__"] == "queue_depth"
    assert not [k for k in found if k.startswith("__") and k != "__name__"], found
