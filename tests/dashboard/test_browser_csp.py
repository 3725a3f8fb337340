"""Headless Chromium under the dashboard's CSP: pages work, no violations, user markup is text."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = pytest.mark.integration

IGNORED = (NoSuchElementException, StaleElementReferenceException)
MARKUP = "<b>rebuild</b>"
GRAPH_READY = """
const gd = document.querySelector('#board-graph .js-plotly-plot');
return !!(gd && gd._fullLayout && gd._fullLayout.xaxis && gd.data && gd.data.length > 0);
"""
CALENDAR_TICKS = """
const ticks = document.querySelectorAll('#changes-timeline .ytick text');
return Array.from(ticks).map(t => t.textContent);
"""


def _document_headers(browser, path: str) -> dict:
    """Return the response headers of the last document loaded at ``path`` (performance log)."""
    found = {}
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.responseReceived":
            continue
        params = message["params"]
        if params.get("type") == "Document" and params["response"]["url"].endswith(path):
            found = {k.lower(): v for k, v in params["response"]["headers"].items()}
    return found


def _load(browser, base: str, path: str) -> list[str]:
    browser.get_log("browser")
    browser.get_log("performance")
    browser.get(base + path)
    WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#_pages_content > *")
    )
    time.sleep(1.0)
    return [e["message"] for e in browser.get_log("browser") if e["level"] in ("SEVERE",)]


def test_board_and_incident_work_under_the_csp_with_no_console_errors(demo_site, browser):
    base, demo, _token = demo_site
    b0, b1 = demo["breach"]
    board = f"/board?model={demo['model']}&from={round(b0 - 3600)}&to={round(b1 + 900)}"
    paths = [board] + ([f"/incidents/{demo['incident']}"] if demo.get("incident") else [])
    assert len(paths) == 2, "the demo incident was opened"
    for path in paths:
        errors = _load(browser, base, path)
        headers = _document_headers(browser, path)
        csp = headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in csp and "script-src 'self' 'sha256-" in csp, path
        assert headers.get("x-frame-options") == "DENY", path
        assert errors == [], (path, errors)
        assert not browser.find_elements(By.CSS_SELECTOR, ".dash-fe-error__title"), path
    browser.get(base + board)
    WebDriverWait(browser, 30, poll_frequency=0.1).until(lambda d: d.execute_script(GRAPH_READY))


def test_a_change_target_with_markup_is_drawn_as_typed(demo_site, browser):
    base, _demo, token = demo_site
    change = {
        "kind": "infra",
        "owner": "infra",
        "summary": "markup check",
        "target": MARKUP,
        "ts": time.time() - 120,
    }
    r = httpx.post(
        f"{base}/api/v1/changes", json=change, headers={"Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 201, r.text
    assert _load(browser, base, "/changes") == []
    ticks = WebDriverWait(browser, 30, poll_frequency=0.2).until(
        lambda d: [t for t in d.execute_script(CALENDAR_TICKS) if "rebuild" in t]
    )
    assert ticks == [MARKUP]
