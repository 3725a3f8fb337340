"""POST /api/v1/write on real databases: round trip, stale markers, idempotence and the 4xx."""

from __future__ import annotations

import math

import cramjam
import pytest

from tests.helpers import count_rows
from tests.receivers.wire import RW_HEADERS, STALE, snappy, write_request

T0 = 1_700_000_000_000  # unix ms


def _post(client, body: bytes, **headers):
    return client.post("/api/v1/write", content=body, headers=RW_HEADERS | headers)


def _values(client, match: str) -> list[tuple[float, float]]:
    params = {"match": match, "start": 0, "end": 2e9}
    result = client.get("/api/v1/query_range", params=params).json()["data"]["result"]
    assert len(result) == 1, result
    return [(float(t), float(v)) for t, v in result[0]["values"]]


def _instant(client, query: str, at_ms: int) -> list:
    params = {"query": query, "time": at_ms / 1000}
    return client.get("/api/v1/query", params=params).json()["data"]["result"]


def test_samples_arrive_once_and_stale_markers_end_the_series(client):
    gpu = {"__name__": "gpu_utilization_percent", "host": "h1", "job": "node", "empty": ""}
    request = write_request(
        [
            (gpu, [(35.0, T0), (36.5, T0 + 15_000)]),
            (gpu, [(37.0, T0 + 30_000), (STALE, T0 + 45_000)]),  # same series, next entry
            ({"__name__": "gone_metric", "host": "h1"}, [(STALE, T0)]),
            ({"__name__": "odd_ratio", "host": "h1"}, [(math.nan, T0), (math.inf, T0 + 1)]),
        ]
    )
    first = _post(client, snappy(request))
    assert first.status_code == 200, first.text
    assert first.json() == {
        "series": 1,
        "samples": 3,
        "inserted": 3,
        "stale_markers": 2,
        "non_finite": 2,
        "native_histograms": 0,
    }
    again = _post(client, snappy(request))  # what Prometheus does after a lost answer
    assert again.status_code == 200 and again.json()["inserted"] == 0
    # Three samples and gpu's marker, a row without a value; gone_metric was never seen:
    # its marker creates nothing.
    assert count_rows(client.engine) == 4
    assert client.get("/api/v1/series", params={"match[]": "gone_metric"}).json()["data"] == []
    stored = _values(client, 'gpu_utilization_percent{host="h1",job="node"}')
    assert stored[:3] == [(1_700_000_000.0, 35.0), (1_700_000_015.0, 36.5), (1_700_000_030.0, 37.0)]
    assert stored[3][0] == 1_700_000_045.0 and math.isnan(stored[3][1])  # the gap, as a bundle
    # PromQL: the series is there until its marker, then gone (not for 5 more minutes).
    assert _instant(client, "gpu_utilization_percent", T0 + 44_000)[0]["value"][1] == "37"
    assert _instant(client, "gpu_utilization_percent", T0 + 46_000) == []
    assert _instant(client, "count(gpu_utilization_percent)", T0 + 60_000) == []
    listed = client.get("/api/v1/series", params={"match": "gpu_utilization_percent"}).json()
    assert listed["data"][0]["labels"] == {"host": "h1", "job": "node"}  # "" is no label


def test_metadata_only_request_stores_nothing(client):
    request = write_request([])
    meta = request.metadata.add(metric_family_name="up", help="target up", type=2)
    assert meta.type == 2
    resp = _post(client, snappy(request))
    assert resp.status_code == 200 and resp.json()["series"] == 0


BAD = [
    ("body", lambda: b"\x00not snappy at all", 400, "snappy"),
    ("protobuf", lambda: bytes(cramjam.snappy.compress_raw(b"\xff\xff\xff")), 400, "WriteRequest"),
    (
        "no name",
        lambda: snappy(write_request([({"job": "x"}, [(1.0, T0)])])),
        400,
        "__name__",
    ),
    (
        "bad label name",
        lambda: snappy(write_request([({"__name__": "m", "a.b": "1"}, [(1.0, T0)])])),
        400,
        "label name",
    ),
    (
        "bad metric name",
        lambda: snappy(write_request([({"__name__": "9m"}, [(1.0, T0)])])),
        400,
        "invalid metric name",
    ),
    (
        "long label value",
        lambda: snappy(write_request([({"__name__": "m", "a": "x" * 3000}, [(1.0, T0)])])),
        400,
        "exceeds the limit",
    ),
    (
        "negative timestamp",
        lambda: snappy(write_request([({"__name__": "m"}, [(1.0, -5)])])),
        400,
        "timestamp",
    ),
    (
        "too many series",
        lambda: snappy(write_request([({"__name__": f"m{i}"}, [(1.0, T0)]) for i in range(21)])),
        400,
        "more than 20 series",
    ),
]


@pytest.mark.parametrize(("case", "body", "status", "words"), BAD, ids=[b[0] for b in BAD])
def test_bad_requests_get_a_4xx_naming_field_and_reason(client, case, body, status, words):
    resp = _post(client, body())
    assert resp.status_code == status, resp.text
    detail = resp.json()["detail"]
    assert words in detail["reason"] and detail["field"], detail
    assert count_rows(client.engine) == 0


def test_one_bad_series_refuses_the_whole_request(client):
    good = ({"__name__": "m", "host": "h"}, [(1.0, T0)])
    bad = ({"__name__": "m", "host": "h", "bad-label": "1"}, [(1.0, T0)])
    resp = _post(client, snappy(write_request([good, bad])))
    assert resp.status_code == 400
    assert resp.json()["detail"]["field"].startswith("timeseries[1].labels")
    assert count_rows(client.engine) == 0


def test_size_limits_and_decompression_bomb(client):
    big = write_request([({"__name__": "m", "v": "x" * 1000}, [(1.0, T0 + i)]) for i in range(60)])
    raw = big.SerializeToString()
    assert len(raw) > 50_000
    inflated = _post(client, bytes(cramjam.snappy.compress_raw(raw)))  # small compressed
    assert inflated.status_code == 413 and "snappy header declares" in inflated.text
    # A bomb: headers claiming 2 GiB or 64 GiB are refused before anything is inflated.
    for header in (b"\x80\x80\x80\x80\x08", b"\x80\x80\x80\x80\x80\x02"):
        bomb = _post(client, header + b"\x00" * 100)
        assert bomb.status_code == 413 and "snappy header declares" in bomb.text
    too_long = _post(client, b"\x00" * 60_000)
    assert too_long.status_code == 413 and "limit" in too_long.text


def test_wrong_headers_and_auth(client):
    body = snappy(write_request([({"__name__": "m"}, [(1.0, T0)])]))
    v2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request"
    assert _post(client, body, **{"Content-Type": v2}).status_code == 415
    assert _post(client, body, **{"Content-Type": "application/json"}).status_code == 415
    assert _post(client, body, **{"Content-Encoding": "gzip"}).status_code == 415
    assert _post(client, body, Authorization="Bearer nope").status_code == 401
    del client.headers["Authorization"]
    assert _post(client, body).status_code == 401
    assert count_rows(client.engine) == 0
