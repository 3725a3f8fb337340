"""Bounds on write bodies: label counts and sizes, number sizes, JSON depth (422 naming them)."""

from __future__ import annotations

import itertools
import json

import pytest
from fastapi.testclient import TestClient

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token
from tests.helpers import count_rows, make_batch

BIG = "1" + "0" * 400  # a 401-digit integer literal
DEEP = "[" * 100_000 + "]" * 100_000
_NAMES = itertools.count()


def _client(engine, **settings) -> TestClient:
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name=f"bounds-{next(_NAMES)}")
    app = create_app(ServiceSettings(database_url=str(engine.url), **settings), engine=engine)
    client = TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def _post(client, path: str, text: str):
    return client.post(path, content=text, headers={"Content-Type": "application/json"})


def _with(**series) -> str:
    batch = make_batch(n_series=2, n_points=2)
    batch["series"][1].update(series)
    return json.dumps(batch)


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        (_with(labels={"pod": "x" * 1_000_000}), "series[1].labels.pod", "limit of 2048"),
        (_with(labels={f"l{i}": "v" for i in range(5000)}), "series[1].labels", "limit of 64"),
        (_with(labels={"a" * 300: "v"}), "series[1].labels." + "a" * 80, "<= 200 chars"),
        (_with(labels={"pod": "a\x00b"}), "series[1].labels.pod", "NUL"),
        (_with(values=[1.0, "BIG"]).replace('"BIG"', BIG), "series[1].values[1]", "out of range"),
        (_with(timestamps=[1.7e9, "BIG"]).replace('"BIG"', BIG), "series[1].timestamps[1]", "unix"),
        (
            json.dumps(
                {"series": [], "events": [{"id": "e", "ts": 1, "kind": "k", "summary": "s"}]}
            ).replace('"ts": 1', f'"ts": {BIG}'),
            "events[0].ts",
            "unix seconds",
        ),
        (DEEP, "body", "nested too deeply"),
        ('{"x": NaN, "series": ' + "[" * 2000 + "]" * 2000 + "}", "body", "deeper than 64"),
    ],
    ids=[
        "label-value",
        "label-count",
        "label-name",
        "nul",
        "value",
        "ts",
        "event",
        "deep",
        "deep2",
    ],
)
def test_ingest_refuses_unbounded_input_naming_the_field(engine, body, field, reason):
    with _client(engine) as client:
        resp = _post(client, "/api/v1/ingest", body)
        assert resp.status_code == 422, resp.text[:300]
        detail = resp.json()["detail"]
        assert detail["field"] == field and reason in detail["reason"]
        assert count_rows(engine) == 0 and count_rows(engine, "series") == 0
        assert client.get("/healthz").status_code == 200  # the connection and service live on


def test_label_limits_are_settings(engine):
    batch = make_batch(n_series=1, n_points=1)
    batch["series"][0]["labels"] = {f"l{i}": "v" * 3000 for i in range(100)}
    with _client(engine) as client:
        assert client.post("/api/v1/ingest", json=batch).status_code == 422
    with _client(engine, max_labels_per_series=128, max_label_value_length=4096) as client:
        assert client.post("/api/v1/ingest", json=batch).status_code == 200
    assert count_rows(engine) == 1


@pytest.mark.parametrize(
    ("path", "body", "loc", "msg"),
    [
        ("/api/v1/changes", DEEP, ["body"], "deeper than 64"),
        ("/api/v1/models", '{"name": "m", "x": ' + "[" * 70 + "]" * 70 + "}", ["body"], "deeper"),
        (
            "/api/v1/changes",
            '{"kind": "deploy", "owner": "algo", "canary_percent": 1e400}',
            ["body", "canary_percent"],
            "finite",
        ),
        (
            "/api/v1/slas",
            f'{{"name": "s", "metric": "m", "op": ">", "threshold": {BIG}}}',
            ["body", "threshold"],
            "out of range",
        ),
        (
            "/api/v1/changes",
            f'{{"kind": "deploy", "owner": "algo", "labels": {{"a": [1, {BIG}]}}}}',
            ["body", "labels", "a", 1],
            "out of range",
        ),
        (
            "/api/v1/changes",
            '{"kind": "deploy", "owner": "algo", "ts": ' + "9" * 5000 + "}",
            ["body"],
            "out of range",
        ),
    ],
    ids=["deep-change", "deep-card", "inf", "big-threshold", "big-nested", "huge-literal"],
)
def test_json_write_routes_refuse_deep_or_huge_bodies(engine, path, body, loc, msg):
    with _client(engine) as client:
        resp = _post(client, path, body)
        assert resp.status_code == 422, resp.text[:300]
        (error,) = resp.json()["detail"]
        assert error["loc"] == loc and msg in error["msg"]
        assert count_rows(engine, "changes") == 0
        ok = client.post("/api/v1/changes", json={"kind": "deploy", "owner": "algo", "ts": 1e9})
        assert ok.status_code == 201, ok.text  # an ordinary body still goes through


def test_json_write_body_past_the_limit_is_413(engine):
    with _client(engine, max_body_bytes=10_000) as client:
        body = json.dumps({"kind": "deploy", "owner": "algo", "summary": "x" * 20_000})
        resp = _post(client, "/api/v1/changes", body)
        assert resp.status_code == 413 and "10000 bytes" in resp.text
        assert count_rows(engine, "changes") == 0
