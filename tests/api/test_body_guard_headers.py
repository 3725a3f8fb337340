"""The edge text check reads every body the route reads as JSON, whatever its headers say.

FastAPI parses a body as JSON for any ``application/json`` or ``application/*+json``
Content-Type, in any case, and ignores Content-Encoding; the guard must check the same
bodies, or a control character reaches the store (and NUL a PostgreSQL 500).
"""

from __future__ import annotations

import gzip
import json

import pytest

from correlator.text import repair
from tests.api.test_text_at_the_edge import WRITES
from tests.helpers import admin_client, count_rows

HEADERS = [
    {"Content-Type": "application/json"},
    {"Content-Type": "application/JSON"},
    {"Content-Type": "Application/Json; charset=utf-8"},
    {"Content-Type": "application/vnd.causeline+json"},
    {"Content-Type": "application/json", "Content-Encoding": "identity"},
    {"Content-Type": "application/json", "Content-Encoding": "gzip"},  # but sent plain
]
IDS = ["json", "JSON", "Json-charset", "plus-json", "identity", "gzip-claimed"]
TABLES = ["fingerprints", "models", "changes", "alert_silences"]


@pytest.fixture
def client(engine):
    """Yield an admin client of the service over the test engine."""
    with admin_client(engine) as c:
        c.engine = engine
        yield c


@pytest.mark.parametrize("headers", HEADERS, ids=IDS)
@pytest.mark.parametrize("bad", ["\\u001b[31m", "\\u0000", "\\ud800"], ids=["esc", "nul", "sur"])
def test_bad_text_is_refused_whatever_the_headers(client, headers, bad):
    decoded = json.loads(f'"{bad}"')
    for method, path, body, field in WRITES:  # every JSON write route
        text = json.dumps(body).replace("@", bad)
        resp = client.request(method, path, content=text, headers=headers)
        assert resp.status_code == 422, (path, resp.text[:300])
        (detail,) = resp.json()["detail"]
        assert detail["field"] == repair(field.replace("@", decoded)), (path, detail)
        assert detail["loc"][0] == "body" and detail["type"] == "value_error", (path, detail)
    assert all(count_rows(client.engine, table) == 0 for table in TABLES)


def test_good_text_with_such_headers_is_stored(client):
    for i, headers in enumerate(HEADERS):
        body = {"host": f"h{i}", "fingerprint": {"cuda": "12.4"}}
        resp = client.post("/api/v1/fingerprints", content=json.dumps(body), headers=headers)
        assert resp.status_code == 201, (headers, resp.text[:300])
    assert count_rows(client.engine, "fingerprints") == len(HEADERS)


def test_a_body_that_is_not_utf8_json_is_named_as_such(client):
    for raw in [b'{"host": "h\xff", "fingerprint": {}}', gzip.compress(b'{"host": "h"}')]:
        resp = client.post("/api/v1/fingerprints", content=raw, headers=HEADERS[0])
        assert resp.status_code == 422, resp.text[:300]
        (detail,) = resp.json()["detail"]
        assert detail["field"] == "body" and "not UTF-8" in detail["msg"], detail
        assert "out of range" not in detail["msg"]
