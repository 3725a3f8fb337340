"""The label catalog API on real databases: label names, label values, the metric list."""

from __future__ import annotations

import pytest

T0 = 1_700_000_000.0


def _series(name: str, labels: dict) -> dict:
    return {"name": name, "labels": labels, "timestamps": [T0, T0 + 15], "values": [1.0, 2.0]}


BATCH = {
    "series": [
        _series("latency_avg", {"service": "PetSite"}),
        _series("latency_avg", {"service": "petInfo_AWS::DynamoDB::Table"}),
        _series("latency_p99", {"service": "PetSite"}),
        _series("gpu_utilization_percent", {"host": "h1", "gpu": "0"}),
        _series("gpu_utilization_percent", {"host": "h1", "gpu": "1"}),
        _series("model_input_length_bucket", {"model": "m", "le": "128"}),
        _series("model_input_length_bucket", {"model": "m", "le": "+Inf"}),
        _series("odd_x_name", {"service": 'caf\u00e9 "x"'}),
        _series("oddxxname", {"service": "PetSite"}),
    ]
}


@pytest.fixture
def reader(client):
    """Yield a client of an app holding the batch above."""
    resp = client.post("/api/v1/ingest", json=BATCH)
    assert resp.status_code == 200, resp.text
    return client


def test_label_names_and_values(reader):
    names = reader.get("/api/v1/labels").json()
    assert names == {
        "status": "success",
        "data": ["__name__", "gpu", "host", "le", "model", "service"],
    }
    services = reader.get("/api/v1/label/service/values").json()["data"]
    assert services == sorted(["PetSite", "petInfo_AWS::DynamoDB::Table", 'caf\u00e9 "x"'])
    metrics = reader.get("/api/v1/label/__name__/values").json()["data"]
    assert metrics == sorted(
        {
            "latency_avg",
            "latency_p99",
            "gpu_utilization_percent",
            "model_input_length_bucket",
            "odd_x_name",
            "oddxxname",
        }
    )
    assert reader.get("/api/v1/label/nothing_here/values").json()["data"] == []


def test_label_values_of_matching_series_only(reader):
    got = reader.get(
        "/api/v1/label/gpu/values", params={"match": 'gpu_utilization_percent{host="h1"}'}
    ).json()
    assert got["data"] == ["0", "1"]
    got = reader.get("/api/v1/labels", params={"match": '{service="PetSite"}'}).json()
    assert got["data"] == ["__name__", "service"]
    got = reader.get("/api/v1/label/__name__/values", params={"match": '{service="PetSite"}'})
    assert got.json()["data"] == ["latency_avg", "latency_p99", "oddxxname"]


def test_limits_are_said_and_bad_input_is_a_422(reader):
    got = reader.get("/api/v1/label/service/values", params={"limit": 1}).json()
    assert got["data"] == ["PetSite"] and got["warnings"] == ["results truncated due to limit"]
    assert reader.get("/api/v1/labels", params={"limit": 0}).status_code == 422
    assert reader.get("/api/v1/label/bad-name/values").status_code == 422
    assert reader.get("/api/v1/labels", params={"match": "bad{{"}).status_code == 422
    assert reader.get("/api/v1/metadata/metrics", params={"contains": "a\x00"}).status_code == 422


def test_metric_catalog_counts_series_and_names_labels(reader):
    got = reader.get("/api/v1/metadata/metrics").json()
    rows = {r["name"]: r for r in got["data"]}
    assert rows["latency_avg"] == {"name": "latency_avg", "series": 2, "labels": ["service"]}
    assert rows["gpu_utilization_percent"]["labels"] == ["gpu", "host"]
    assert rows["model_input_length_bucket"] == {
        "name": "model_input_length_bucket",
        "series": 2,
        "labels": ["le", "model"],
    }
    assert "warnings" not in got
    some = reader.get("/api/v1/metadata/metrics", params={"contains": "x_n"}).json()
    assert [r["name"] for r in some["data"]] == ["odd_x_name"]
    first = reader.get("/api/v1/metadata/metrics", params={"limit": 2}).json()
    assert [r["name"] for r in first["data"]] == ["gpu_utilization_percent", "latency_avg"]
    assert first["warnings"] == ["results truncated due to limit"]


def test_match_on_the_metric_name_by_regex(reader):
    """Grafana's label_values({__name__=~"vllm:.*"}, model_name): the name is a label too."""
    params = {"match[]": '{__name__=~"latency_.*"}'}
    services = reader.get("/api/v1/label/service/values", params=params).json()["data"]
    assert services == ["PetSite", "petInfo_AWS::DynamoDB::Table"]
    found = reader.get("/api/v1/series", params=params).json()["data"]
    assert sorted(s["__name__"] for s in found) == ["latency_avg", "latency_avg", "latency_p99"]
    names = reader.get("/api/v1/labels", params={"match[]": '{__name__=~"gpu_.*|model_.*"}'})
    assert names.json()["data"] == ["__name__", "gpu", "host", "le", "model"]
    exact = reader.get("/api/v1/series", params={"match[]": '{__name__="latency_p99"}'})
    assert [s["service"] for s in exact.json()["data"]] == ["PetSite"]


def test_a_selector_matching_everything_is_refused(reader):
    for match in ('{__name__=~".*"}', '{service=~".*"}', '{service=""}'):
        resp = reader.get("/api/v1/label/service/values", params={"match[]": match})
        assert resp.status_code == 422, (match, resp.text)
        assert "does not match the empty string" in resp.json()["detail"]["reason"]
