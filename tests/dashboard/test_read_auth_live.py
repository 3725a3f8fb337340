"""`up` off loopback: the dashboard shows nothing without a sign-in, everything with one."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.dashboard.conftest import LiveServer, demo_store, empty_store
from tests.helpers import free_port

SUMMARY = "rotate-secret-in-feature-store-77"
CHANGES_CALLBACK = {
    "output": "..changes-timeline.figure...changes-list.children..",
    "outputs": [
        {"id": "changes-timeline", "property": "figure"},
        {"id": "changes-list", "property": "children"},
    ],
    "inputs": [
        {"id": "changes-kind", "property": "value", "value": None},
        {"id": "changes-owner", "property": "value", "value": None},
        {"id": "changes-days", "property": "value", "value": 7},
        {"id": "changes-reload", "property": "data", "value": None},
    ],
    "changedPropIds": [],
    "state": [],
}


def _page_callback(path: str) -> dict:
    return {
        "output": ".._pages_content.children..._pages_store.data..",
        "outputs": [
            {"id": "_pages_content", "property": "children"},
            {"id": "_pages_store", "property": "data"},
        ],
        "inputs": [
            {"id": "_pages_location", "property": "pathname", "value": path},
            {"id": "_pages_location", "property": "search", "value": ""},
        ],
        "changedPropIds": ["_pages_location.pathname"],
        "state": [],
    }


@pytest.fixture(scope="module")
def wide_site(tmp_path_factory):
    """Yield (base, token, incident id, SLA name) of `up --host 0.0.0.0`, served on loopback."""
    from causeline.commands.up import build_app

    url, demo, token = demo_store(tmp_path_factory.mktemp("wide"), hours=3)
    port = free_port()
    # Built as for `--host 0.0.0.0` (reads need a token); listening on loopback only.
    app = build_app(database_url=url, host="0.0.0.0", port=port)
    with LiveServer(app, port) as live:
        auth = {"Authorization": f"Bearer {token}"}
        at = demo["breach"][1] - 60
        httpx.post(f"{live.base}/api/v1/evaluate", params={"at": at}, headers=auth, timeout=120)
        change = {"kind": "config", "owner": "infra", "summary": SUMMARY, "ts": time.time() - 60}
        assert (
            httpx.post(f"{live.base}/api/v1/changes", json=change, headers=auth).status_code == 201
        )
        incidents = httpx.get(f"{live.base}/api/v1/incidents", headers=auth).json()
        yield live.base, token, incidents[0]["id"], demo["sla"]


def test_without_a_sign_in_pages_and_callbacks_show_nothing(wide_site):
    base, _token, incident, sla = wide_site
    with httpx.Client(base_url=base, timeout=60) as anon:
        assert anon.get("/api/v1/incidents").status_code == 401
        for path in (f"/incidents/{incident}", "/changes"):
            r = anon.get(path)
            assert r.status_code in (302, 303, 401), (path, r.status_code)
            landed = anon.get(path, follow_redirects=True)
            assert "/login" in str(landed.url) and 'name="token"' in landed.text
        for body in (_page_callback(f"/incidents/{incident}"), CHANGES_CALLBACK):
            r = anon.post("/_dash-update-component", json=body)
            assert r.status_code == 401
            assert sla not in r.text and SUMMARY not in r.text
        assert anon.get("/_dash-layout").status_code == 401


def test_a_reader_token_signs_in_and_the_pages_show_the_data(wide_site):
    base, token, incident, sla = wide_site
    with httpx.Client(base_url=base, timeout=120) as person:
        wrong = person.post("/login", data={"token": "cl_wrong", "next": "/changes"})
        assert wrong.status_code == 401
        signed = person.post("/login", data={"token": token, "next": "/changes"})
        assert signed.status_code == 303 and signed.headers["location"] == "/changes"
        assert person.get(f"/incidents/{incident}").status_code == 200
        page = person.post("/_dash-update-component", json=_page_callback(f"/incidents/{incident}"))
        assert page.status_code == 200 and sla in page.text
        changes = person.post("/_dash-update-component", json=CHANGES_CALLBACK)
        assert changes.status_code == 200 and SUMMARY in changes.text


def test_a_rebound_host_name_gets_neither_api_nor_pages(tmp_path):
    from causeline.commands.up import build_app

    port = free_port()
    app = build_app(database_url=empty_store(tmp_path), host="127.0.0.1", port=port)
    with LiveServer(app, port) as live, httpx.Client(base_url=live.base, timeout=60) as c:
        for path in ("/api/v1/slas", "/board", "/_dash-layout"):
            assert c.get(path, headers={"Host": f"evil.example:{port}"}).status_code == 421, path
            assert c.get(path).status_code == 200, path  # Host: 127.0.0.1:PORT
        page = c.get("/board")
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY"


def test_up_on_another_loopback_address_reaches_its_service(tmp_path):
    from causeline.commands.up import build_app, local_url

    port = free_port()
    app = build_app(database_url=empty_store(tmp_path), host="127.0.0.2", port=port)
    with LiveServer(app, port, host="127.0.0.2") as live:
        r = httpx.post(f"{live.base}/_dash-update-component", json=CHANGES_CALLBACK, timeout=60)
        assert r.status_code == 200
        assert "cannot reach the service" not in r.text and "changes-table" in r.text

    assert local_url("0.0.0.0", 1) == "http://127.0.0.1:1"
    assert local_url("::", 1) == "http://[::1]:1"
    assert local_url("::1", 1) == "http://[::1]:1"
