"""POST /v1/metrics on real databases: OTLP/JSON and protobuf, gzip, deltas and the 4xx."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

from tests.helpers import count_rows

NS = 1_700_000_000_000_000_000  # unix nanoseconds
JSON = {"Content-Type": "application/json"}
PROTOBUF = {"Content-Type": "application/x-protobuf"}


def _point(value, seconds=0, **extra):
    return {"timeUnixNano": str(NS + seconds * 10**9), **value, **extra}


def export(*metrics, service="ranker") -> dict:
    """Return an OTLP/JSON export of ``metrics`` from one resource."""
    resource = {
        "attributes": [
            {"key": "service.name", "value": {"stringValue": service}},
            {"key": "service.instance.id", "value": {"stringValue": "i-1"}},
            {"key": "host.name", "value": {"stringValue": "gpu-node-1"}},
            {"key": "telemetry.sdk.name", "value": {"stringValue": "opentelemetry"}},
        ]
    }
    scope = {"scope": {"name": "ranker.metrics"}, "metrics": list(metrics)}
    return {"resourceMetrics": [{"resource": resource, "scopeMetrics": [scope]}]}


MODEL = [{"key": "model", "value": {"stringValue": "click_rank_v3"}}]
GAUGE = {
    "name": "gpu.temperature",
    "unit": "Cel",
    "gauge": {"dataPoints": [_point({"asDouble": 71.5}, attributes=MODEL)]},
}
COUNTER = {
    "name": "model.requests",
    "unit": "{request}",
    "sum": {
        "aggregationTemporality": 2,
        "isMonotonic": True,
        "dataPoints": [_point({"asInt": "5"}), _point({"asInt": "9"}, 10)],
    },
}
DELTA_UPDOWN = {
    "name": "queue.depth",
    "sum": {
        "aggregationTemporality": 1,
        "isMonotonic": False,
        "dataPoints": [_point({"asInt": "4"}), _point({"asInt": "-1"}, 10)],
    },
}
HISTOGRAM = {
    "name": "model.input.length",
    "unit": "{token}",
    "histogram": {
        "aggregationTemporality": 2,
        "dataPoints": [
            _point(
                {},
                count="10",
                sum=1234.0,
                bucketCounts=["2", "5", "3"],
                explicitBounds=[64, 256],
                attributes=MODEL,
            )
        ],
    },
}


def _post_json(client, doc, **headers):
    return client.post("/v1/metrics", content=json.dumps(doc), headers=JSON | headers)


def _series(client, match: str) -> dict[str, list[tuple[float, float]]]:
    params = {"match": match, "start": 0, "end": 2e9}
    result = client.get("/api/v1/query_range", params=params).json()["data"]["result"]
    return {
        json.dumps(r["metric"], sort_keys=True): [(float(t), float(v)) for t, v in r["values"]]
        for r in result
    }


def _one(client, match: str) -> tuple[dict, list[tuple[float, float]]]:
    found = _series(client, match)
    assert len(found) == 1, found
    key, values = found.popitem()
    return json.loads(key), values


def test_json_export_becomes_series_and_a_histogram_family(client):
    resp = _post_json(client, export(GAUGE, COUNTER, DELTA_UPDOWN, HISTOGRAM))
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "application/json" and resp.json() == {}
    base = {"service": "ranker", "instance": "i-1", "host": "gpu-node-1"}  # sdk.name dropped
    t0 = NS / 1e9
    labels, values = _one(client, "gpu_temperature_celsius")
    assert labels == {"__name__": "gpu_temperature_celsius", **base, "model": "click_rank_v3"}
    assert values == [(t0, 71.5)]
    assert _one(client, "model_requests_total")[1] == [(t0, 5.0), (t0 + 10, 9.0)]
    assert _one(client, "queue_depth")[1] == [(t0, 4.0), (t0 + 10, 3.0)]  # deltas summed
    buckets = _series(client, "model_input_length_bucket")
    by_le = {json.loads(k)["le"]: v[0][1] for k, v in buckets.items()}
    assert by_le == {"64": 2.0, "256": 7.0, "+Inf": 10.0}  # cumulative, as Prometheus
    assert _one(client, "model_input_length_sum")[1] == [(t0, 1234.0)]
    assert _one(client, "model_input_length_count")[1] == [(t0, 10.0)]
    hist = client.get("/api/v1/series", params={"match": "model_input_length_bucket"}).json()
    assert len(hist["data"]) == 3


def test_resent_export_is_stored_once_and_deltas_do_not_double(client):
    doc = export(COUNTER, DELTA_UPDOWN, HISTOGRAM)
    assert _post_json(client, doc).status_code == 200
    stored = count_rows(client.engine)
    assert _post_json(client, doc).status_code == 200
    assert count_rows(client.engine) == stored
    assert _one(client, "queue_depth")[1][-1][1] == 3.0
    later = dict(
        DELTA_UPDOWN, sum=dict(DELTA_UPDOWN["sum"], dataPoints=[_point({"asInt": "2"}, 20)])
    )
    assert _post_json(client, export(later)).status_code == 200
    assert _one(client, "queue_depth")[1][-1] == (NS / 1e9 + 20, 5.0)


def test_protobuf_gzip_and_partial_success(client):
    doc = export(
        GAUGE,
        {"name": "skipped", "gauge": {"dataPoints": [_point({"asDouble": 1}, flags=1)]}},
        {"name": "nan", "gauge": {"dataPoints": [_point({"asDouble": "NaN"})]}},
        {
            "name": "exp",
            "exponentialHistogram": {"aggregationTemporality": 2, "dataPoints": [_point({})]},
        },
    )
    message = json_format.ParseDict(doc, ExportMetricsServiceRequest())
    body = gzip.compress(message.SerializeToString())
    resp = client.post("/v1/metrics", content=body, headers=PROTOBUF | {"Content-Encoding": "gzip"})
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/x-protobuf"
    answer = ExportMetricsServiceResponse.FromString(resp.content)
    assert answer.partial_success.rejected_data_points == 2  # NaN and the exponential one
    assert "exponential histograms" in answer.partial_success.error_message
    assert count_rows(client.engine) == 1  # the gauge; "no recorded value" is no point


def _instant(client, query: str, seconds: float) -> list:
    params = {"query": query, "time": NS / 1e9 + seconds}
    return client.get("/api/v1/query", params=params).json()["data"]["result"]


def test_no_recorded_value_ends_the_series_as_a_stale_marker(client):
    assert _post_json(client, export(GAUGE, COUNTER, HISTOGRAM)).status_code == 200
    stopped = {"flags": 1, "attributes": MODEL}
    gauge = dict(GAUGE, gauge={"dataPoints": [_point({}, 30, **stopped)]})
    hist = dict(
        HISTOGRAM,
        histogram={
            "aggregationTemporality": 2,
            "dataPoints": [_point({}, 30, explicitBounds=[64, 256], **stopped)],
        },
    )
    assert _post_json(client, export(gauge, hist)).status_code == 200
    everything = '{__name__=~"gpu_temperature_celsius|model_input_length_.*"}'
    assert len(_instant(client, everything, 20)) == 6  # gauge, 3 buckets, _sum, _count
    assert _instant(client, everything, 31) == []  # stopped at 30 s, not 5 minutes later
    assert len(_instant(client, "model_requests_total", 31)) == 1  # its points go on
    assert _one(client, "gpu_temperature_celsius")[1][-1][0] == NS / 1e9 + 30


def _bad_bucket_counts():
    bad = json.loads(json.dumps(HISTOGRAM))
    bad["histogram"]["dataPoints"][0]["bucketCounts"] = ["1", "2"]
    return export(GAUGE, bad)


BAD_JSON = [
    ("not json", b"{nope", "body", "OTLP/JSON"),
    (
        "bucket counts",
        _bad_bucket_counts(),
        "resourceMetrics[0].scopeMetrics[0].metrics[1].histogram.dataPoints[0].bucketCounts",
        "bounds + 1",
    ),
    (
        "temporality",
        export({"name": "c", "sum": {"dataPoints": [_point({"asInt": "1"})]}}),
        "resourceMetrics[0].scopeMetrics[0].metrics[0].sum.aggregationTemporality",
        "DELTA",
    ),
    (
        "time",
        export({"name": "g", "gauge": {"dataPoints": [{"asDouble": 1}]}}),
        "resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints[0].timeUnixNano",
        "must be set",
    ),
    (
        "label value",
        export(
            {
                "name": "g",
                "gauge": {
                    "dataPoints": [
                        _point(
                            {"asDouble": 1},
                            attributes=[{"key": "k", "value": {"stringValue": "x" * 3000}}],
                        )
                    ]
                },
            }
        ),
        "resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints[0].labels.k",
        "exceeds the limit",
    ),
    (
        "series",
        export(
            *[
                {"name": f"g{i}", "gauge": {"dataPoints": [_point({"asDouble": 1})]}}
                for i in range(21)
            ]
        ),
        "body",
        "more than 20 series",
    ),
]


@pytest.mark.parametrize(("case", "doc", "field", "words"), BAD_JSON, ids=[b[0] for b in BAD_JSON])
def test_bad_exports_get_400_with_a_status_naming_field_and_reason(client, case, doc, field, words):
    body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    resp = client.post("/v1/metrics", content=body, headers=JSON)
    assert resp.status_code == 400, resp.text
    status = resp.json()
    assert status["code"] == 3 and status["message"].startswith(f"{field}: "), status
    assert words in status["message"]
    assert count_rows(client.engine) == 0


def test_protobuf_errors_limits_and_auth(client):
    resp = client.post("/v1/metrics", content=b"\xff\xff\xff", headers=PROTOBUF)
    assert resp.status_code == 400
    assert "OTLP protobuf" in Status.FromString(resp.content).message
    bomb = gzip.compress(b"\x00" * 200_000)  # inflates past the 50 kB limit
    resp = client.post("/v1/metrics", content=bomb, headers=PROTOBUF | {"Content-Encoding": "gzip"})
    assert resp.status_code == 413
    assert client.post("/v1/metrics", content=b"x" * 60_000, headers=PROTOBUF).status_code == 413
    enc = {"Content-Encoding": "br"}
    assert client.post("/v1/metrics", content=b"", headers=PROTOBUF | enc).status_code == 415
    plain = {"Content-Type": "text/plain"}
    assert client.post("/v1/metrics", content=b"", headers=plain).status_code == 415
    resp = client.post("/v1/metrics", content=b"", headers=JSON | {"Authorization": "Bearer no"})
    assert resp.status_code == 401 and resp.json()["code"] == 16
    assert count_rows(client.engine) == 0


def test_delta_histograms_give_quantiles_as_native_buckets_do(client):
    """Twelve 10 s delta exports whose inputs grow long half-way: p50 moves as it should."""
    from correlator.analysis import histogram
    from correlator.analysis.timeline import choose_grid
    from correlator.bundle import Series

    for k in range(12):
        counts = ["6", "2", "0", "0"] if k < 6 else ["1", "1", "6", "0"]
        point = _point({}, 10 * k, count="8", sum=8.0, bucketCounts=counts)
        point["explicitBounds"] = [64, 256, 1024]
        metric = {
            "name": "model.input.length",
            "unit": "{token}",
            "histogram": {"aggregationTemporality": 1, "dataPoints": [point]},
        }
        assert _post_json(client, export(metric)).status_code == 200
    params = {"match": "model_input_length_bucket", "start": 0, "end": 2e9}
    result = client.get("/api/v1/query_range", params=params).json()["data"]["result"]
    parts = [
        Series(
            r["metric"]["__name__"],
            {k: v for k, v in r["metric"].items() if k != "__name__"},
            np.array([float(t) for t, _ in r["values"]]),
            np.array([float(v) for _, v in r["values"]]),
        )
        for r in result
    ]
    totals = {p.labels["le"]: p.values[-1] for p in parts}
    assert totals == {"64": 42.0, "256": 60.0, "1024": 96.0, "+Inf": 96.0}  # running sums
    (group,) = histogram.group_buckets(parts).values()
    grid = choose_grid(group, 10.0)
    built = histogram.build(group, grid, name="model_input_length", labels={})
    p50 = histogram.quantile(built.bounds, built.counts, 0.5)
    assert np.nanmax(p50[:5]) <= 64 and np.nanmin(p50[-5:]) > 256
