"""What `causeline up` sends: docs from its own files, compressed bodies, cache headers."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from starlette.testclient import TestClient

from tests.dashboard.conftest import empty_store

BASE = "http://127.0.0.1:8400"
OUTSIDE = re.compile(r"""https?://(?!127\.0\.0\.1:8400)[^\s"'<>)]+""")
REFS = re.compile(r"""(?:src|href)="([^"]+)"|url: '([^']+)'""")
DASHBOARD = Path(__file__).resolve().parents[2] / "dashboard"
PLOTLY_BASIC = DASHBOARD / "assets" / "plotly-basic.min.js"  # vendored, as released


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from causeline.commands.up import build_app

    url = empty_store(tmp_path_factory.mktemp("transfer"))
    with TestClient(build_app(database_url=url, host="127.0.0.1", port=8400), BASE) as c:
        yield c


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_reference_no_outside_host_and_their_assets_answer(client, page):
    r = client.get(page)
    assert r.status_code == 200
    assert not OUTSIDE.findall(r.text), r.text
    refs = [a or b for a, b in REFS.findall(r.text)]
    assert any(ref.endswith(".js") for ref in refs), refs
    for ref in refs:
        asset = client.get(ref)
        assert asset.status_code == 200, ref
        kind = asset.headers["content-type"]
        if ref.endswith(".js"):
            assert "javascript" in kind and len(asset.content) > 100_000
        elif ref.endswith(".css"):
            assert kind.startswith("text/css")


def test_large_responses_are_gzipped_small_ones_not(client):
    big = client.get("/openapi.json", headers={"accept-encoding": "gzip"})
    assert big.headers["content-encoding"] == "gzip"
    small = client.get("/healthz", headers={"accept-encoding": "gzip"})
    assert "content-encoding" not in small.headers


def test_api_data_is_not_cached(client):
    r = client.get("/api/v1/series", headers={"accept-encoding": "gzip"})
    assert r.headers["cache-control"] == "no-store"


def test_versioned_dashboard_files_are_immutable_others_revalidate(client):
    page = client.get("/board")
    assert page.headers.get("cache-control") != "public, max-age=31536000, immutable"
    suites = re.findall(r'src="(/_dash-component-suites/[^"]+)"', page.text)
    assets = re.findall(r'href="(/assets/[^"]+\?m=[^"]+)"', page.text)
    assert suites and assets
    for ref in suites + assets:
        r = client.get(ref)
        assert r.headers["cache-control"] == "public, max-age=31536000, immutable", ref
    chunk = client.get("/_dash-component-suites/plotly/package_data/plotly.min.js")
    assert chunk.status_code == 200
    assert "immutable" not in chunk.headers.get("cache-control", "")


def test_gzipped_ingest_body_still_reaches_the_route(client):
    body = gzip.compress(b'{"series": []}')
    headers = {"content-encoding": "gzip", "content-type": "application/json"}
    r = client.post("/api/v1/ingest", content=body, headers=headers)
    assert r.status_code != 400 and "not valid gzip" not in r.text, r.text


def test_no_dashboard_source_names_an_outside_host():
    allowed = ("http://127.0.0.1", "http://localhost")
    for path in DASHBOARD.rglob("*"):
        if path.suffix not in {".py", ".css", ".js", ".html"} or path == PLOTLY_BASIC:
            continue
        for url in OUTSIDE.findall(path.read_text(encoding="utf-8")):
            assert url.startswith(allowed), f"{path}: {url}"


@pytest.mark.integration
def test_docs_render_in_chromium_without_internet(demo_site, browser):
    base, _demo, _token = demo_site
    browser.get(base + "/docs")
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title")
    )
    title = browser.find_element(By.CSS_SELECTOR, ".swagger-ui .info .title").text
    assert "causeline" in title
    assert browser.find_elements(By.CSS_SELECTOR, ".swagger-ui .opblock")


def test_pages_draw_with_the_small_plotly_bundle_of_the_plotly_in_use(client):
    from plotly.offline import get_plotlyjs_version

    head = PLOTLY_BASIC.read_text(encoding="utf-8")[:200]
    vendored = re.search(r"plotly\.js \(basic - minified\) v(\d+)\.(\d+)\.\d+", head)
    assert vendored, head
    assert vendored.groups() == tuple(get_plotlyjs_version().split(".")[:2])
    page = client.get("/board").text
    refs = [a or b for a, b in REFS.findall(page)]
    assert any(r.split("?")[0].endswith("/assets/plotly-basic.min.js") for r in refs), refs
    assert not any("package_data/plotly.min.js" in r for r in refs)  # loaded only if missing
