"""Text is checked once at the edge: surrogates and control characters get a 422 naming the field.

Every JSON write route, the path of a write, ingest; a silence stored with a surrogate
before the check existed reads back (the surrogate as U+FFFD) instead of a 500.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import time
from typing import Any

import pytest
from sqlalchemy import insert

from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.tables import AlertSilence
from correlator.text import FREE_TEXT, repair
from tests.helpers import admin_client, count_rows, make_batch

SURROGATE = "\\ud800"  # as JSON text: a lone high surrogate
OSC = "\\u001b]0;pwned\\u0007"  # sets a terminal's title
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """Yield a client of the service over one SQLite store with a model m and SLA s."""
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('edge') / 'c.db'}")
    upgrade(engine)
    with admin_client(engine) as c:
        assert c.post("/api/v1/models", json={"name": "m"}).status_code == 201
        sla = {"name": "s", "metric": "lat", "op": ">", "threshold": 1}
        assert c.post("/api/v1/slas", json=sla).status_code == 201
        yield c
    engine.dispose()


def _with(body: dict, bad: str) -> str:
    """Return ``body`` as JSON text, each ``@`` in it replaced by the escape text ``bad``."""
    return json.dumps(body).replace("@", bad)


# (method, path, body with "@" where the bad text goes, the field the 422 must name)
WRITES = [
    ("POST", "/api/v1/fingerprints", {"host": "h@", "fingerprint": {}}, "host"),
    ("POST", "/api/v1/fingerprints", {"host": "h", "fingerprint": {"d@": 1}}, "fingerprint.d@"),
    ("POST", "/api/v1/changes", {"kind": "deploy", "owner": "algo", "summary": "@"}, "summary"),
    ("PUT", "/api/v1/changes/c1", {"person": "@"}, "person"),
    ("POST", "/api/v1/hooks/deploy", {"model": "m", "version": "v@"}, "version"),
    ("POST", "/api/v1/models", {"name": "n@"}, "name"),
    ("PUT", "/api/v1/models/m/versions/1/card", {"known_risks": ["r", "@"]}, "known_risks[1]"),
    ("POST", "/api/v1/models/m/instances", {"instance": "i@"}, "instance"),
    ("POST", "/api/v1/slas", {"name": "x", "metric": "l", "labels": {"k": "@"}}, "labels.k"),
    ("PUT", "/api/v1/slas/s", {"metric": "l@"}, "metric"),
    ("POST", "/api/v1/analyze", {"sla": "@"}, "sla"),
    (
        "POST",
        "/api/v1/oncall/rotations",
        {"name": "r", "team": "algo", "members": ["a", {"name": "@"}], "start": 1},
        "members[1].name",
    ),
    (
        "POST",
        "/api/v1/oncall/overrides",
        {"team": "algo", "person": "p", "start": 1, "end": 2, "reason": "@"},
        "reason",
    ),
    ("POST", "/api/v1/capacity/plan", {"sla_latency_ms": 30, "peak_qps": 1, "gpu": "@"}, "gpu"),
    ("POST", "/api/v1/alerts/silences", {"matchers": {"model": "@"}}, "matchers.model"),
    ("POST", "/api/v1/alerts/silences", {"matchers": {"m": "x"}, "comment": "@"}, "comment"),
    ("POST", "/api/v1/incidents/1/notes", {"text": "@"}, "text"),
    ("POST", "/api/v1/incidents/1/resolve", {"author": "@"}, "author"),
    (
        "POST",
        "/api/v1/hooks/alertmanager",
        {"version": "4", "alerts": [{"labels": {"alertname": "@"}}]},
        "alerts[0].labels.alertname",
    ),
]
IDS = [f"{m} {p} {f}" for m, p, _, f in WRITES]


@pytest.mark.parametrize(("method", "path", "body", "field"), WRITES, ids=IDS)
@pytest.mark.parametrize("bad", [SURROGATE, OSC], ids=["surrogate", "osc"])
def test_write_routes_refuse_bad_text_naming_the_field(client, method, path, body, field, bad):
    resp = client.request(method, path, content=_with(body, bad), headers=JSON)
    assert resp.status_code == 422, resp.text[:300]
    (detail,) = resp.json()["detail"]
    decoded = json.loads(f'"{bad}"')
    assert detail["field"] == repair(field.replace("@", decoded))
    assert detail["loc"][0] == "body" and detail["type"] == "value_error"
    assert ("surrogate" if bad == SURROGATE else "control character") in detail["msg"]


def test_names_refuse_tab_and_newline_free_text_keeps_them(client):
    resp = client.post("/api/v1/slas", json={"name": "a\nb", "metric": "l"})
    assert resp.status_code == 422 and resp.json()["detail"][0]["field"] == "name"
    assert "free text" in resp.json()["detail"][0]["msg"]
    change = {"kind": "deploy", "owner": "algo", "summary": "rolled out\n\tto 5%\r\n"}
    resp = client.post("/api/v1/changes", json=change)
    assert resp.status_code == 201 and resp.json()["summary"] == change["summary"]
    sla = {"name": "doc", "metric": "l", "description": "# SLA\n\n- page algo\n"}
    assert client.post("/api/v1/slas", json=sla).status_code == 201
    assert client.post("/api/v1/models", json={"name": "µs-東京-😀"}).status_code == 201


@pytest.mark.parametrize("escaped", ["%1b%5b31m", "s%c2%9b", "a%09b"])
def test_a_name_in_the_path_of_a_write_is_checked_too(client, escaped):
    resp = client.put(f"/api/v1/slas/{escaped}", json={"metric": "l"})
    assert resp.status_code == 422, resp.text[:300]
    (detail,) = resp.json()["detail"]
    assert detail["loc"] == ["path"] and detail["field"] == "path"
    assert "control character" in detail["msg"]
    names = [s["name"] for s in client.get("/api/v1/slas").json()]
    assert all(n.isprintable() for n in names), names


def _batch(**labels) -> dict:
    batch = make_batch(n_series=2, n_points=3)
    batch["series"][1]["labels"].update(labels)
    return batch


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        (_with(_batch(pod="p@"), SURROGATE), "series[1].labels.pod", "surrogate"),
        (_with(_batch(pod="p@"), "\\u001b[31m"), "series[1].labels.pod", "control character"),
        (_with(_batch() | {"note@": 1}, "\\u009b"), "note\x9b", "key must not contain control"),
        (_with(_batch(pod="a@b"), "\\n"), "series[1].labels.pod", "free text"),
        (_with(_batch(pod="p@"), "\ud800"), "series[1].labels.pod", "surrogate"),  # UTF-8 bytes
        (_with(_batch(pod="p@"), "\x7f"), "series[1].labels.pod", "U+007F"),
        (
            json.dumps(
                {"series": [], "events": [{"id": "e@", "ts": 1, "kind": "k", "summary": "s"}]}
            ).replace("@", "\\u0085"),
            "events[0].id",
            "U+0085",
        ),
    ],
    ids=[
        "surrogate",
        "csi",
        "c1-in-key",
        "newline-in-label",
        "surrogate-bytes",
        "del",
        "c1",
    ],
)
def test_ingest_refuses_bad_text_naming_the_field(engine, text, field, reason):
    with admin_client(engine) as client:
        resp = client.post(
            "/api/v1/ingest", content=text.encode("utf-8", "surrogatepass"), headers=JSON
        )
        assert resp.status_code == 422, resp.text[:300]
        detail = resp.json()["detail"]
        assert detail["field"].startswith(field) and reason in detail["reason"], detail
        assert count_rows(engine) == 0 and count_rows(engine, "series") == 0


def test_ingest_keeps_free_text_lines_and_escaped_pairs(engine):
    batch = make_batch(n_series=1, n_points=2)
    batch["series"][0]["labels"]["emoji"] = "😀"  # json.dumps writes a surrogate pair escape
    batch["events"] = [{"id": "e", "ts": 1.7e9, "kind": "deploy", "summary": "a\nb", "labels": {}}]
    with admin_client(engine) as client:
        resp = client.post("/api/v1/ingest", content=json.dumps(batch), headers=JSON)
        assert resp.status_code == 200, resp.text[:300]
        assert resp.json()["events"] == 1 and count_rows(engine) == 2


def test_a_silence_stored_with_a_surrogate_reads_back(engine):
    now = time.time()
    with write_transaction(engine) as conn:
        conn.execute(
            insert(AlertSilence).values(
                matchers={"model": "x\ud800"},
                starts_at=now - 60,
                ends_at=now + 3600,
                comment="stored before the check",
                author="ops",
                created_at=now - 60,
            )
        )
    with admin_client(engine) as client:
        resp = client.get("/api/v1/alerts/silences")
        assert resp.status_code == 200, resp.text[:300]
        (silence,) = resp.json()
        assert silence["matchers"] == {"model": "x\ufffd"}
        assert silence["state"] == "active"
        resp = client.request("DELETE", f"/api/v1/alerts/silences/{silence['id']}")
        assert resp.status_code in (200, 204), resp.text[:300]


def _body_models() -> list[type]:
    import correlator.api.schemas as schemas
    from correlator.api.handlers import Body

    for module in pkgutil.iter_modules(schemas.__path__):
        importlib.import_module(f"correlator.api.schemas.{module.name}")
    seen, stack = set(), [Body]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return sorted(seen, key=lambda m: m.__name__)


def test_every_long_text_field_of_a_body_is_free_text():
    """A body field that holds prose (longer than a name, or any JSON) keeps its lines."""
    from correlator.limits import MAX_NAME

    long_fields = set()
    for model in _body_models():
        for name, info in model.model_fields.items():
            limit = next((m.max_length for m in info.metadata if hasattr(m, "max_length")), None)
            if info.annotation is Any or (limit is not None and limit > MAX_NAME):
                long_fields.add(name)
    assert long_fields - {"url"} <= FREE_TEXT, sorted(long_fields - {"url"} - FREE_TEXT)
    assert {"summary", "description", "comment", "text", "purpose"} <= long_fields
