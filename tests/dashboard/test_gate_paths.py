"""The sign-in gate opens exact routes only, and the dashboard's server bounds request bodies."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dashboard.settings import DashboardSettings
from tests.dashboard.test_gate import CALLBACK, _app

SUITE = "/_dash-component-suites/dash/deps/polyfill@7.v4_4_1m1.12.1.min.js"


@pytest.mark.parametrize(
    "path",
    [
        "/loginx",
        "/login/x",
        "/logout",  # a GET: sign-out is a POST, the rest is the shell
        "/logoutx",
        "/assets",
        "/assets/",
        "/assetsx/style.css",
        "/_dash-component-suites/x",
        "/_dash-component-suites/",
        "/_favicon.icox",
        "/static/x",
    ],
)
def test_paths_that_only_start_like_open_ones_need_a_sign_in(path):
    app, _tokens = _app(read_auth="token")
    r = app.server.test_client().get(path)
    if path.startswith("/_"):  # Dash's own routes: no redirect, a plain refusal
        assert r.status_code == 401, (path, r.status_code, r.get_data(as_text=True)[:200])
        return
    assert r.status_code == 302, (path, r.status_code, r.get_data(as_text=True)[:200])
    assert r.headers["Location"].startswith("/login?next="), path


def test_the_sign_in_page_and_real_code_and_style_files_stay_open():
    app, _tokens = _app(read_auth="token")
    c = app.server.test_client()
    assert c.get("/login").status_code == 200
    assert c.get("/assets/style.css").status_code == 200
    assert c.get("/_favicon.ico").status_code == 200
    assert c.get(SUITE).status_code == 200
    assert c.get("/assets/missing.css").status_code == 404  # a file route: never the shell
    assert c.post("/logout").status_code in (302, 303)


def test_under_a_prefix_the_same_exact_routes_are_open():
    app, _tokens = _app(read_auth="token", url_prefix="/dash/")
    c = app.server.test_client()
    assert c.get("/dash/login").status_code == 200
    assert c.get("/dash/assets/style.css").status_code == 200
    for path in ("/dash/loginx", "/dash/assets/", "/dash/login/x"):
        assert c.get(path).status_code == 302, path


def test_a_callback_body_past_the_bound_gets_413_before_it_is_read():
    app, _tokens = _app(max_body_bytes=10_000)  # loopback: callbacks are open
    c = app.server.test_client()
    padded = CALLBACK | {"state": [{"id": "x", "property": "data", "value": "y" * 20_000}]}
    r = c.post("/_dash-update-component", json=padded)
    assert r.status_code == 413, r.status_code
    assert "CAUSELINE_DASHBOARD_MAX_BODY_BYTES" in r.get_data(as_text=True)
    assert c.post("/_dash-update-component", json=CALLBACK).status_code != 413


def test_the_default_bound_is_a_few_mib_and_a_positive_number():
    app, _tokens = _app()
    c = app.server.test_client()
    big = b"x" * (DashboardSettings().max_body_bytes + 1)
    r = c.post("/_dash-update-component", data=big, content_type="application/json")
    assert r.status_code == 413
    assert 1 << 20 <= DashboardSettings().max_body_bytes <= 16 << 20
    with pytest.raises(ValidationError):
        DashboardSettings(max_body_bytes=0)


def test_up_refuses_a_big_callback_body_sent_in_chunks_without_reading_it_all(tmp_path):
    from starlette.testclient import TestClient

    from causeline.commands.up import build_app
    from tests.dashboard.conftest import empty_store

    app = build_app(database_url=empty_store(tmp_path), host="127.0.0.1", port=8400)
    sent = []

    def body():
        for _ in range(400):  # 400 MiB if it were all read
            sent.append(1)
            yield b"x" * (1 << 20)

    with TestClient(app, "http://127.0.0.1:8400") as c:
        headers = {"Content-Type": "application/json"}
        r = c.post("/_dash-update-component", content=body(), headers=headers)
        assert r.status_code in (400, 413), r.status_code  # no length: read as empty
        declared = c.post("/_dash-update-component", content=b"x" * (5 << 20), headers=headers)
        assert declared.status_code == 413
    assert len(sent) < 400
