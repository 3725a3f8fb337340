"""A NUL in a read's query parameter gets a 4xx naming it on both engines, never a 500.

PostgreSQL's text type cannot hold NUL, so a filter that reaches SQL with one fails in the
driver; SQLite would only match nothing. Every GET route of the OpenAPI document is swept.
"""

from __future__ import annotations

import pytest

from tests.helpers import admin_client


@pytest.fixture
def client(engine):
    """Yield an admin client of the service over the test engine, one fingerprint stored."""
    with admin_client(engine) as c:
        body = {"host": "h1", "instance": "i1", "model": "m1", "fingerprint": {"cuda": "12.4"}}
        assert c.post("/api/v1/fingerprints", json=body).status_code == 201
        yield c


@pytest.mark.parametrize(
    ("path", "params", "name"),
    [
        ("/api/v1/fingerprints", {"host": "a\x00b"}, "host"),
        ("/api/v1/fingerprints/latest", {"host": "a\x00b"}, "host"),
        ("/api/v1/fingerprints/latest", {"host": "h1", "instance": "i\x00"}, "instance"),
        ("/api/v1/fingerprints/latest", {"host": "h1", "model": "\x00"}, "model"),
        ("/api/v1/fingerprints", {"host": "h" * 201}, "host"),
    ],
    ids=["list-host", "latest-host", "latest-instance", "latest-model", "list-host-too-long"],
)
def test_fingerprint_filters_refuse_nul_naming_the_parameter(client, path, params, name):
    resp = client.get(path, params=params)
    assert resp.status_code == 422, resp.text[:300]
    assert [d["loc"] for d in resp.json()["detail"]] == [["query", name]]


def test_fingerprint_filters_still_find_what_is_stored(client):
    [listed] = client.get("/api/v1/fingerprints", params={"host": "h1"}).json()
    assert listed["host"] == "h1" and listed["fingerprint"] == {"cuda": "12.4"}
    assert client.get("/api/v1/fingerprints", params={"host": "h\x1b"}).json() == []
    params = {"host": "h1", "instance": "i1", "model": "m1"}
    assert client.get("/api/v1/fingerprints/latest", params=params).json()["host"] == "h1"


def _value(param: dict) -> str:
    """Return a value the parameter takes, for the ones a request needs besides the probed one."""
    schema = param.get("schema", {})
    kinds = {schema.get("type")} | {s.get("type") for s in schema.get("anyOf", [])}
    if kinds & {"number", "integer"}:
        return "1"
    return "up" if "match" in param["name"] else "x"


def _probes(doc: dict):
    """Yield (path, params) with NUL in each string or array query parameter of each GET."""
    for path, ops in doc["paths"].items():
        params = ops.get("get", {}).get("parameters", [])
        url = path
        for p in params:
            if p["in"] == "path":
                url = url.replace("{" + p["name"] + "}", "x")
        for probed in params:
            schema = probed.get("schema", {})
            kinds = {schema.get("type")} | {s.get("type") for s in schema.get("anyOf", [])}
            if probed["in"] != "query" or not kinds & {"string", "array"}:
                continue
            query = {p["name"]: _value(p) for p in params if p["in"] == "query" and p is not probed}
            yield url, query | {probed["name"]: "a\x00b"}


def test_no_get_route_answers_500_for_nul_in_a_query_parameter(client):
    probes = list(_probes(client.get("/openapi.json").json()))
    assert ("/api/v1/fingerprints", {"host": "a\x00b"}) in probes
    failed = []
    for url, params in probes:
        resp = client.get(url, params=params)
        if resp.status_code >= 500:
            failed.append(f"{resp.status_code} GET {url} {params!r}: {resp.text[:200]}")
    assert not failed, "\n".join(failed)


def test_a_fingerprint_is_stored_once_and_says_so_on_both_engines(client):
    """PostgreSQL once answered stored: false for a new row (an executemany's rowcount)."""
    body = {"host": "h2", "instance": "i1", "model": "m1", "fingerprint": {"cuda": "12.8"}}
    first = client.post("/api/v1/fingerprints", json=body)
    assert first.status_code == 201 and first.json()["stored"] is True, first.text
    again = client.post("/api/v1/fingerprints", json=body)
    assert again.json()["stored"] is False, again.text
    assert len(client.get("/api/v1/fingerprints", params={"host": "h2"}).json()) == 1
