"""Tokens: revocation holds at once everywhere, scopes per route, names reusable after revoke."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from causeline.cli import main
from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.tokens import (
    TokenExistsError,
    create_token,
    list_tokens,
    revoke_token,
    token_info,
)
from tests.helpers import engine_at, make_batch

CHANGE = {"kind": "deploy", "owner": "algo", "summary": "v2"}
SILENCE = {"matchers": {"model": "m"}, "duration_seconds": 60}


def _token(engine, name: str, scope: str = "admin") -> str:
    with write_transaction(engine) as conn:
        return create_token(conn=conn, name=name, scope=scope)


def _client(engine, token: str) -> TestClient:
    app = create_app(ServiceSettings(database_url=str(engine.url)), engine=engine)
    client = TestClient(app, base_url="http://127.0.0.1")
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def test_revoke_through_the_cli_holds_at_once_in_two_apps(engine, db_url, capsys):
    secret = _token(engine, "ops", "write")
    other = make_engine(db_url)  # a second service process: its own engine and pool
    try:
        with _client(engine, secret) as one, _client(other, secret) as two:
            assert one.post("/api/v1/changes", json=CHANGE).status_code == 201
            assert two.post("/api/v1/changes", json=CHANGE).status_code == 201
            assert main(["token", "revoke", "ops", "--database-url", db_url]) == 0
            assert "revoked ops" in capsys.readouterr().out
            for client in (one, two):
                resp = client.post("/api/v1/changes", json=CHANGE)
                assert resp.status_code == 401, resp.text
                assert resp.json()["detail"] == "invalid or revoked token"
                assert client.post("/api/v1/ingest", json=make_batch()).status_code == 401
    finally:
        other.dispose()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM changes")).scalar_one() == 2


def test_ingest_token_ingests_and_nothing_more(engine):
    ingest = _token(engine, "agent", "ingest")
    with _client(engine, ingest) as client:
        assert client.post("/api/v1/ingest", json=make_batch()).status_code == 200
        denied = {
            ("DELETE", "/api/v1/slas/x"): "admin",
            ("POST", "/api/v1/alerts/silences"): "write",
            ("POST", "/api/v1/incidents/1/resolve"): "write",
            ("POST", "/api/v1/incidents/1/rerank"): "write",
            ("POST", "/api/v1/changes"): "write",
            ("POST", "/api/v1/hooks/alertmanager"): "write",
        }
        for (method, path), scope in denied.items():
            body = SILENCE if "silences" in path else CHANGE if "changes" in path else {}
            resp = client.request(method, path, json=None if method == "DELETE" else body)
            assert resp.status_code == 403, (path, resp.text)
            detail = resp.json()["detail"]
            assert f"needs scope '{scope}'" in detail and "has scope 'ingest'" in detail, detail
            assert f"--scope {scope}" in detail
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM alert_silences")).scalar_one() == 0
        assert conn.execute(text("SELECT COUNT(*) FROM changes")).scalar_one() == 0


def test_write_token_writes_but_cannot_delete_and_admin_can(engine):
    write, admin = _token(engine, "ci", "write"), _token(engine, "root", "admin")
    with _client(engine, write) as client:
        assert client.post("/api/v1/ingest", json=make_batch()).status_code == 200
        assert client.post("/api/v1/changes", json=CHANGE).status_code == 201
        silence = client.post("/api/v1/alerts/silences", json=SILENCE)
        assert silence.status_code == 201, silence.text
        sid = silence.json()["id"]
        gone = client.delete(f"/api/v1/alerts/silences/{sid}")
        assert gone.status_code == 403 and "needs scope 'admin'" in gone.json()["detail"]
        assert client.delete("/api/v1/slas/x").status_code == 403
    with _client(engine, admin) as client:
        assert client.delete(f"/api/v1/alerts/silences/{sid}").status_code == 204
        assert client.delete("/api/v1/slas/x").status_code == 404  # allowed; no such SLA


def test_revoked_name_can_be_used_again(engine):
    first = _token(engine, "agent-7", "ingest")
    with pytest.raises(TokenExistsError):
        _token(engine, "agent-7")
    with write_transaction(engine) as conn:
        assert revoke_token(conn=conn, name="agent-7")
    second = _token(engine, "agent-7", "write")
    with pytest.raises(TokenExistsError):
        _token(engine, "agent-7")
    with engine.connect() as conn:
        assert token_info(conn=conn, secret=first) is None
        assert token_info(conn=conn, secret=second).scope == "write"
        rows = [(t["name"], t["scope"], t["revoked"]) for t in list_tokens(conn=conn)]
    assert rows == [("agent-7", "ingest", True), ("agent-7", "write", False)]
    with write_transaction(engine) as conn:  # only the active one is revoked again
        assert revoke_token(conn=conn, name="agent-7")
        assert not revoke_token(conn=conn, name="agent-7")


def test_cli_creates_ingest_tokens_unless_told(engine, db_url, capsys):
    assert main(["token", "create", "node-1", "--database-url", db_url]) == 0
    assert main(["token", "create", "ci", "--scope", "write", "--database-url", db_url]) == 0
    capsys.readouterr()
    assert main(["token", "list", "--database-url", db_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["node-1\tingest\tactive", "ci\twrite\tactive"]
    assert main(["token", "revoke", "node-1", "--database-url", db_url]) == 0
    assert main(["token", "create", "node-1", "--database-url", db_url]) == 0


def test_existing_tokens_become_admin_tokens_on_upgrade(db_url):
    with engine_at(db_url, "0005") as eng:
        with eng.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO tokens (name, token_hash, created_at, revoked) "
                    "VALUES ('old', :h, :t, :r)"
                ),
                {"h": "0" * 64, "t": int(time.time()), "r": False},
            )
        upgrade(eng)
        with eng.connect() as conn:
            assert [(t["name"], t["scope"]) for t in list_tokens(conn=conn)] == [("old", "admin")]
        with write_transaction(eng) as conn, pytest.raises(TokenExistsError):
            create_token(conn=conn, name="old")
        with write_transaction(eng) as conn:
            assert revoke_token(conn=conn, name="old")
            create_token(conn=conn, name="old", scope="ingest")
