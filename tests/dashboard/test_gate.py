"""The dashboard's doors: the read rule (sign-in), the Host check and the security headers."""

from __future__ import annotations

import flask
import httpx
import pytest

from dashboard.app import create_dashboard
from dashboard.client import ApiClient, ApiError
from dashboard.gate import READER
from dashboard.settings import DashboardSettings
from dashboard.signin import COOKIE, safe_next

GOOD = "cl_good"
PAGES = ["/", "/board", "/incidents", "/incidents/1", "/changes", "/models", "/metrics-browser"]
CALLBACK = {"output": "x.children", "outputs": {"id": "x", "property": "children"}, "inputs": []}


class Tokens:
    """The service's token check, as the dashboard sees it through the API client."""

    def __init__(self):
        self.valid = {GOOD}
        self.asked: list[str] = []

    def __call__(self, secret: str) -> str:
        self.asked.append(secret)
        if secret not in self.valid:
            raise ApiError(401, "invalid or revoked token")
        return "reader"


def _app(**settings):
    client = ApiClient("http://127.0.0.1:9", token="service")
    tokens = Tokens()
    client.whoami = tokens
    settings = DashboardSettings(api_url="http://127.0.0.1:9", api_token="service", **settings)
    return create_dashboard(settings, api_client=client), tokens


def _sign_in(test_client, token=GOOD, target="/incidents/1"):
    return test_client.post("/login", data={"token": token, "next": target})


@pytest.mark.parametrize("settings", [{"bind_host": "0.0.0.0"}, {"read_auth": "token"}])
def test_off_loopback_pages_and_callbacks_need_a_sign_in(settings):
    app, _tokens = _app(**settings)
    c = app.server.test_client()
    for path in PAGES:
        r = c.get(path)
        assert r.status_code == 302, path
        assert r.headers["Location"].startswith("/login?next="), path
    assert c.get("/_dash-layout").status_code == 401
    assert c.get("/_dash-dependencies").status_code == 401
    assert c.post("/_dash-update-component", json=CALLBACK).status_code == 401
    # code and style without data stay open, so the sign-in page can be drawn
    assert c.get("/login").status_code == 200
    assert c.get("/assets/style.css").status_code == 200


def test_a_valid_token_signs_in_with_a_strict_cookie_and_a_revoke_signs_out():
    app, tokens = _app(bind_host="0.0.0.0")
    c = app.server.test_client()
    bad = _sign_in(c, "cl_wrong")
    assert bad.status_code == 401 and "Invalid or revoked token" in bad.get_data(as_text=True)
    assert "Set-Cookie" not in bad.headers
    good = _sign_in(c)
    assert good.status_code == 303 and good.headers["Location"] == "/incidents/1"
    cookie = good.headers["Set-Cookie"]
    assert f"{COOKIE}={GOOD}" in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert c.get("/incidents/1").status_code == 200
    layout = c.get("/_dash-layout")
    assert layout.status_code == 200 and "Sign out" in layout.get_data(as_text=True)
    c.set_cookie(COOKIE, "a b\u00e9", path="/")  # junk is no token and costs no API call
    assert c.get("/_dash-layout").status_code == 401 and tokens.asked[-1] == GOOD
    c.set_cookie(COOKIE, GOOD, path="/")
    tokens.valid.clear()  # revoked at the service: the next request is refused
    assert c.get("/_dash-layout").status_code == 401
    assert c.get("/changes").status_code == 302


def test_sign_in_refuses_another_origin_and_sign_out_clears_the_cookie():
    app, _tokens = _app(bind_host="0.0.0.0")
    c = app.server.test_client()
    forged = c.post(
        "/login", data={"token": GOOD, "next": "/"}, headers={"Origin": "http://evil.example"}
    )
    assert forged.status_code == 403 and "Set-Cookie" not in forged.headers
    _sign_in(c)
    out = c.post("/logout")
    assert out.status_code == 303 and f"{COOKIE}=;" in out.headers["Set-Cookie"]
    assert c.get("/_dash-layout").status_code == 401


def test_a_trusted_proxy_header_signs_the_person_in():
    app, _tokens = _app(bind_host="0.0.0.0", user_header="X-Forwarded-User")
    c = app.server.test_client()
    assert c.get("/_dash-layout", headers={"X-Forwarded-User": "wang.fang"}).status_code == 200
    assert c.get("/_dash-layout").status_code == 401


def test_loopback_with_auto_stays_open():
    app, tokens = _app()
    c = app.server.test_client()
    assert c.get("/incidents/1").status_code == 200
    assert c.get("/_dash-layout").status_code == 200
    assert tokens.asked == []


def test_an_unknown_host_is_refused_and_known_ones_answer():
    app, _tokens = _app(bind_host="127.0.0.2")
    server = app.server
    evil = server.test_client().get("/board", base_url="http://evil.example:8050")
    assert evil.status_code == 421
    for base in ("http://127.0.0.2:8050", "http://127.0.0.1:8050", "http://[::1]:8050"):
        assert server.test_client().get("/board", base_url=base).status_code == 200, base
    wide, _ = _app(bind_host="127.0.0.1", allowed_hosts="causeline.internal")
    assert (
        wide.server.test_client().get("/", base_url="http://causeline.internal").status_code == 200
    )


def test_every_response_forbids_framing_and_sniffing_and_inline_scripts():
    app, _tokens = _app()
    c = app.server.test_client()
    for path in ["/board", "/incidents/1", "/_dash-layout", "/login", "/assets/style.css"]:
        r = c.get(path)
        csp = r.headers.get("Content-Security-Policy", "")
        assert "frame-ancestors 'none'" in csp, path
        assert (
            "script-src 'self' 'sha256-" in csp
            and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
        ), path
        assert r.headers.get("X-Frame-Options") == "DENY", path
        assert r.headers.get("X-Content-Type-Options") == "nosniff", path


@pytest.mark.parametrize(
    "value", ["//evil.example/", "/\\evil.example", "http://evil.example/", "javascript:x", ""]
)
def test_sign_in_goes_back_only_to_a_dashboard_page(value):
    assert safe_next(value, "/") == "/board"
    assert safe_next("/incidents/3?x=1", "/") == "/incidents/3?x=1"


def test_reads_go_with_the_signed_in_persons_token_writes_with_the_services():
    seen: list[tuple[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.headers.get("authorization", "")))
        if request.url.path == "/api/v1/query_range":
            return httpx.Response(200, json={"data": {"result": []}})
        return httpx.Response(200, json={})

    app, _tokens = _app(bind_host="0.0.0.0")
    client = app.server.config["causeline_context"].client
    client._http = httpx.Client(
        base_url="http://api",
        headers={"Authorization": "Bearer service"},
        transport=httpx.MockTransport(handler),
    )
    with app.server.test_request_context("/board"):
        flask.g.setdefault(READER, GOOD)
        client.get("/api/v1/slas")
        client.query_many([["up"], ["down"]], 0, 60)
        client.post("/api/v1/changes", {"kind": "config"}, author="a")
    assert seen[:3] == [("GET", f"Bearer {GOOD}")] * 3
    assert seen[3] == ("POST", "Bearer service")
