"""The ingest API against real databases: round trip, idempotency, atomic rejection, auth."""

from __future__ import annotations

import gzip
import json
import threading

import pytest
from fastapi.testclient import TestClient

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token
from tests.helpers import count_rows, make_batch


@pytest.fixture
def service(engine):
    """Yield (client, token, engine) for an app on the test database."""
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="agent-1")
    settings = ServiceSettings(
        database_url=str(engine.url), max_body_bytes=200_000, max_series_per_batch=50
    )
    app = create_app(settings, engine=engine)
    with TestClient(app) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        yield client, token, engine


def _query(client, match, start=0, end=2e9):
    resp = client.get("/api/v1/query_range", params={"match": match, "start": start, "end": end})
    assert resp.status_code == 200, resp.text
    return resp.json()["data"]["result"]


def test_ingest_round_trip(service):
    client, _, engine = service
    batch = make_batch(n_series=3, n_points=4)
    resp = client.post("/api/v1/ingest", json=batch)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"series": 3, "samples": 12, "inserted": 12, "events": 0}
    result = _query(client, 'gpu_utilization_percent{host="h1"}')
    assert len(result) == 1
    assert result[0]["metric"] == {"__name__": "gpu_utilization_percent", "host": "h1", "gpu": "0"}
    assert result[0]["values"] == [[1_700_000_000.0 + 15 * k, str(100 + k)] for k in range(4)]
    listed = client.get("/api/v1/series", params={"match": '{host=~"h[02]"}'}).json()["data"]
    assert sorted(s["labels"]["host"] for s in listed) == ["h0", "h2"]


def test_query_range_step_keeps_each_steps_extremes(service):
    client, _, _ = service
    batch = make_batch(n_series=1, n_points=40, step=15.0)
    batch["series"][0]["values"][17] = 999.0
    assert client.post("/api/v1/ingest", json=batch).status_code == 200
    params = {"match": "gpu_utilization_percent", "start": 0, "end": 2e9, "step": 150}
    values = client.get("/api/v1/query_range", params=params).json()["data"]["result"][0]["values"]
    buckets = {int((1_700_000_000 + 15 * k) // 150) for k in range(40)}
    assert len(values) == 2 * len(buckets)  # a min and a max of each 150 s step
    assert ["1700000255", "999"] in [[f"{t:.0f}", v] for t, v in values]
    bad = client.get("/api/v1/query_range", params=params | {"step": 0})
    assert bad.status_code == 422


def test_gzip_body_and_events(service):
    client, _, engine = service
    batch = make_batch(n_series=1, n_points=2)
    batch["events"] = [
        {
            "id": "xid-1",
            "ts": 1_700_000_010.0,
            "kind": "gpu_xid",
            "summary": "XID 79 on GPU 0",
            "labels": {"host": "h0", "gpu": "0"},
        }
    ]
    body = gzip.compress(json.dumps(batch).encode())
    for _ in range(2):
        resp = client.post(
            "/api/v1/ingest",
            content=body,
            headers={"Content-Encoding": "gzip", "Content-Type": "application/json"},
        )
        assert resp.status_code == 200, resp.text
    assert count_rows(engine, "events") == 1
    events = client.get("/api/v1/events", params={"start": 0, "end": 2e9}).json()
    assert events[0]["summary"] == "XID 79 on GPU 0"


def test_same_and_overlapping_batches_store_each_sample_once(service):
    client, _, engine = service
    first = make_batch(n_series=2, n_points=10)
    assert client.post("/api/v1/ingest", json=first).json()["inserted"] == 20
    assert client.post("/api/v1/ingest", json=first).json()["inserted"] == 0
    shifted = make_batch(n_series=2, n_points=10, t0=1_700_000_000.0 + 5 * 15)
    assert client.post("/api/v1/ingest", json=shifted).json()["inserted"] == 10
    assert count_rows(engine) == 30


BAD_INPUTS = [
    (
        "nan value",
        lambda b: b["series"][1]["values"].__setitem__(2, float("nan")),
        "series[1].values[2]",
        "finite",
    ),
    (
        "timestamp not a number",
        lambda b: b["series"][2]["timestamps"].__setitem__(0, "noon"),
        "series[2].timestamps[0]",
        "timestamp",
    ),
    (
        "label not a string",
        lambda b: b["series"][1]["labels"].__setitem__("gpu", 0),
        "series[1].labels.gpu",
        "string",
    ),
    (
        "empty metric name",
        lambda b: b["series"][2].__setitem__("name", ""),
        "series[2].name",
        "non-empty",
    ),
    (
        "event with a NUL character",
        lambda b: b.__setitem__(
            "events", [{"id": "e1", "ts": 1_700_000_000.0, "kind": "gpu_xid", "summary": "a\x00b"}]
        ),
        "events[0].summary",
        "without NUL",
    ),
    (
        "arrays of different length",
        lambda b: b["series"][0]["values"].pop(),
        "series[0]",
        "differ in length",
    ),
]


@pytest.mark.parametrize(
    ("case", "spoil", "field", "reason"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS]
)
def test_bad_sample_rejects_whole_batch(service, case, spoil, field, reason):
    client, _, engine = service
    assert (
        client.post(
            "/api/v1/ingest", json=make_batch(n_series=1, n_points=3, name="kept")
        ).status_code
        == 200
    )
    before = count_rows(engine), count_rows(engine, "series")
    batch = make_batch(n_series=3, n_points=4)
    spoil(batch)
    resp = client.post(
        "/api/v1/ingest", content=json.dumps(batch), headers={"Content-Type": "application/json"}
    )
    assert resp.status_code == 422, resp.text
    detail = resp.json()["detail"]
    assert detail["field"] == field
    assert reason in detail["reason"]
    assert (count_rows(engine), count_rows(engine, "series")) == before


def test_auth_is_required_for_writes(service):
    client, _, engine = service
    batch = make_batch()
    no_token = client.post("/api/v1/ingest", json=batch, headers={"Authorization": ""})
    assert no_token.status_code == 401
    assert "causeline token create" in no_token.json()["detail"]
    wrong = client.post("/api/v1/ingest", json=batch, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert count_rows(engine) == 0


def test_reads_can_require_a_token(engine):
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="reader")
    app = create_app(
        ServiceSettings(database_url=str(engine.url), read_auth="token"), engine=engine
    )
    with TestClient(app) as client:
        assert client.get("/api/v1/series", params={"match": "x"}).status_code == 401
        ok = client.get(
            "/api/v1/series", params={"match": "x"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert ok.status_code == 200
    assert ServiceSettings(bind_host="0.0.0.0").reads_need_token()
    assert not ServiceSettings(bind_host="127.0.0.1").reads_need_token()


def test_limits(service):
    client, _, engine = service
    big = make_batch(n_series=40, n_points=400)
    resp = client.post("/api/v1/ingest", json=big)
    assert resp.status_code == 413
    bomb = gzip.compress(json.dumps(big).encode())
    assert len(bomb) < 200_000
    resp = client.post("/api/v1/ingest", content=bomb, headers={"Content-Encoding": "gzip"})
    assert resp.status_code == 413
    too_many = make_batch(n_series=51, n_points=1)
    resp = client.post("/api/v1/ingest", json=too_many)
    assert resp.status_code == 422
    assert "limit of 50" in resp.json()["detail"]["reason"]
    assert count_rows(engine) == 0


def test_concurrent_writers_to_the_same_series(service):
    client, token, engine = service
    app = client.app
    errors = []

    def writer(offset: int) -> None:
        with TestClient(app) as own:
            own.headers["Authorization"] = f"Bearer {token}"
            for k in range(10):
                batch = make_batch(n_series=2, n_points=20, t0=1_700_000_000.0 + (k + offset) * 150)
                resp = own.post("/api/v1/ingest", json=batch)
                if resp.status_code != 200:
                    errors.append(resp.text)

    threads = [threading.Thread(target=writer, args=(off,)) for off in (0, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # windows 0..9 and 5..14 (150 s apart) of 20 points 15 s apart overlap; 2 series each
    expected = len({1_700_000_000.0 + w * 150 + p * 15 for w in range(15) for p in range(20)})
    assert count_rows(engine) == 2 * expected


def test_bad_selector_and_window(service):
    client, _, _ = service
    resp = client.get("/api/v1/series", params={"match": "bad{{"})
    assert resp.status_code == 422
    assert resp.json()["detail"]["field"] == "match"
    resp = client.get("/api/v1/query_range", params={"match": "x", "start": 10, "end": 5})
    assert resp.status_code == 422


def test_openapi_documents_the_ingest_body(service):
    client, _, _ = service
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/api/v1/ingest"]["post"]["requestBody"]["content"]["application/json"]
    assert "series" in body["schema"]["properties"]
    assert "SeriesIn" in schema["components"]["schemas"]
