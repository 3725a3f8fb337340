"""The service answers only Host names it is known by (DNS rebinding), and says who a token is."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from correlator.api.app import create_app
from correlator.api.hosts import allowed_hosts, host_name
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token, revoke_token


def _client(engine, **settings) -> TestClient:
    service = ServiceSettings(database_url=str(engine.url), **({"allowed_hosts": None} | settings))
    return TestClient(create_app(service, engine=engine), base_url="http://127.0.0.1:8400")


def test_a_rebound_name_is_refused_on_loopback_and_loopback_names_answer(engine):
    with _client(engine) as c:
        refused = c.get("/api/v1/series", params={"match": "up"}, headers={"Host": "evil.example"})
        assert refused.status_code == 421
        assert "CAUSELINE_ALLOWED_HOSTS" in refused.text
        for host in ("127.0.0.1:8400", "localhost:8400", "[::1]:8400", "LOCALHOST"):
            ok = c.get("/api/v1/series", params={"match": "up"}, headers={"Host": host})
            assert ok.status_code == 200, (host, ok.text)
        assert c.get("/healthz", headers={"Host": "10.1.2.3:8400"}).status_code == 200


def test_configured_and_public_names_answer_others_do_not(engine):
    with _client(
        engine, allowed_hosts="causeline.internal", public_url="https://cl.example.com/"
    ) as c:
        for host, status in [
            ("causeline.internal", 200),
            ("cl.example.com", 200),
            ("evil.example", 421),
            ("causeline.internal.evil.example", 421),
        ]:
            assert c.get("/api/v1/slas", headers={"Host": host}).status_code == status, host


def test_host_names_parse_ports_and_brackets():
    assert host_name("Example.COM:8400") == "example.com"
    assert host_name("[::1]:8400") == "::1"
    assert host_name("::1") == "::1"
    assert allowed_hosts(bind_host="0.0.0.0", extra=None, public_url=None) is None
    assert allowed_hosts(bind_host="127.0.0.2", extra="*", public_url=None) is None
    names = allowed_hosts(bind_host="127.0.0.2", extra=None, public_url="http://a.example:1")
    assert names == {"127.0.0.2", "localhost", "127.0.0.1", "::1", "a.example"}


def test_whoami_names_a_valid_token_and_refuses_others(engine):
    with write_transaction(engine) as conn:
        secret = create_token(conn=conn, name="reader-1")
    with _client(engine) as c:
        assert c.get("/api/v1/whoami").status_code == 401
        bad = c.get("/api/v1/whoami", headers={"Authorization": "Bearer cl_nope"})
        assert bad.status_code == 401
        good = c.get("/api/v1/whoami", headers={"Authorization": f"Bearer {secret}"})
        assert good.status_code == 200 and good.json() == {"name": "reader-1"}
        with write_transaction(engine) as conn:
            revoke_token(conn=conn, name="reader-1")
        gone = c.get("/api/v1/whoami", headers={"Authorization": f"Bearer {secret}"})
        assert gone.status_code == 401


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8400"])
def test_writes_through_a_rebound_name_are_refused_too(engine, host):
    with write_transaction(engine) as conn:
        secret = create_token(conn=conn, name="w")
    with _client(engine) as c:
        r = c.post(
            "/api/v1/changes",
            json={"kind": "config", "summary": "x", "author": "a"},
            headers={"Host": host, "Authorization": f"Bearer {secret}"},
        )
        assert r.status_code == 421
