"""The board on imported real incidents (PetShop, Nezha) in headless Chromium: any names."""

from __future__ import annotations

import json
import time
from urllib.parse import quote, urlencode

import httpx
import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = pytest.mark.integration

IGNORED = (NoSuchElementException, StaleElementReferenceException)
# Each panel's title and the points its traces hold (change markers left out).
PANELS = """
const gd = document.querySelector('#board-graph .js-plotly-plot');
if (!gd || !gd._fullLayout || !gd._fullData) { return null; }
const counts = {};
for (const t of gd._fullData) {
  if (t.meta && t.meta.role === 'changes') { continue; }
  const axis = t.yaxis || 'y';
  counts[axis] = (counts[axis] || 0) + (t._length || 0);
}
const out = (gd.layout.annotations || []).map((a, i) => ({
  title: a.text.replace(/<[^>]+>/g, ''),
  points: counts[i === 0 ? 'y' : 'y' + (i + 1)] || 0,
  unit: ((gd._fullLayout[i === 0 ? 'yaxis' : 'yaxis' + (i + 1)] || {}).title || {}).text,
}));
return out;
"""


def _statuses(browser) -> list[tuple[int, str]]:
    """Return (status, URL) of every response since the last call (Chromium's performance log)."""
    out = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.responseReceived":
            response = message["params"]["response"]
            out.append((int(response["status"]), response["url"]))
    return out


def _open(browser, url: str, settle: float = 0.8) -> list[tuple[int, str]]:
    """Load a board URL, wait for its status line, and return the responses it took."""
    _statuses(browser)
    browser.get(url)
    WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.find_element(By.ID, "board-status").text
    )
    time.sleep(settle)  # trailing callbacks (kept panels, filters)
    return _statuses(browser)


def _no_server_errors(responses) -> None:
    bad = [(s, u) for s, u in responses if s >= 500]
    assert not bad, bad
    callbacks = [s for s, u in responses if "_dash-update-component" in u]
    assert callbacks and all(s in (200, 204) for s in callbacks), responses


def _panels(browser) -> list[dict]:
    return WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.execute_script(PANELS)
    )


def _board(browser, url: str) -> dict[str, dict]:
    """Load a board URL with no server error and return its drawn panels by title."""
    _no_server_errors(_open(browser, url))
    return {p["title"]: p for p in _panels(browser)}


def _window(sla: dict) -> str:
    start, end = round(sla["breach_start"] - 1800), round(sla["breach_start"] + 900)
    return f"from={start}&to={end}"


def test_petshop_board_draws_the_sla_suspects_and_a_selector_panel(bundle_site, browser):
    base, bundles = bundle_site
    sla = bundles["petshop"]
    panel = quote('PetSite p99|latency_p99{service="PetSite"}')
    panels = _board(browser, f"{base}/board?{_window(sla)}&panel={panel}")
    title = f"{sla['name']} · latency · service=PetSite · SLA"
    assert title in panels, list(panels)
    assert panels[title]["points"] >= 3
    assert panels["PetSite p99 · Yours"]["points"] >= 3
    suspects = [t for t in panels if t.endswith("· Suspect")]
    assert suspects and all(panels[t]["points"] > 0 for t in suspects)
    assert len(panels) < 16  # empty built-in panels are not drawn ...
    notes = browser.find_element(By.ID, "board-notes").text
    hidden = notes.split("No data in this window, so not drawn: ")[1]  # ... and are named
    assert "QPS, Latency p50 / p95 / p99" in hidden and "Container restarts" in hidden
    assert (
        f"suspects of incident #{sla['incident']}"
        in browser.find_element(By.ID, "board-status").text
    )


def test_nezha_board_for_a_service_reads_units_from_names(bundle_site, browser):
    base, bundles = bundle_site
    sla = bundles["nezha"]
    panel = quote('cpu_usage_rate_percent{service="cartservice"}')
    panels = _board(browser, f"{base}/board?{_window(sla)}&service=frontend&panel={panel}")
    title = f"{sla['name']} · service_latency_seconds · service=frontend · SLA"
    assert title in panels, list(panels)
    assert panels[title]["points"] >= 3 and panels[title]["unit"] == "s"
    mine = panels['cpu_usage_rate_percent{service="cartservice"} · Yours']
    assert mine["points"] >= 3 and mine["unit"] == "%"
    assert any(t.endswith("service=frontend · Service") for t in panels)
    byte_units = {p["unit"] for p in panels.values() if "network_bytes" in p["title"]}
    assert byte_units and byte_units <= {"B", "KiB", "MiB", "GiB"}
    assert "service=frontend" in browser.current_url and "panel=" in browser.current_url


@pytest.mark.parametrize("model", ["unknown", "PetSite", "None", 'a"(b'])
def test_an_unknown_model_says_no_data_and_nothing_fails(bundle_site, browser, model):
    base, bundles = bundle_site
    url = f"{base}/board?{urlencode({'model': model})}&{_window(bundles['petshop'])}"
    responses = _open(browser, url)
    _no_server_errors(responses)
    notes = browser.find_element(By.ID, "board-notes").text
    assert f"no data for model={model} in this window" in notes
    if model == "PetSite":
        assert "PetSite is a service: show service=PetSite" in notes
    assert not browser.find_elements(By.CSS_SELECTOR, ".dash-fe-error__title")


def test_board_pages_answer_200_for_odd_urls(bundle_site):
    base, bundles = bundle_site
    window = _window(bundles["petshop"])
    for query in ("model=unknown", "model=PetSite", f"model=PetSite&{window}", "from=nan&to=inf"):
        assert httpx.get(f"{base}/board?{query}", timeout=30).status_code == 200, query


def test_add_a_panel_keep_it_for_the_service_and_share_it(bundle_site, browser):
    base, bundles = bundle_site
    window = _window(bundles["petshop"])
    _open(browser, f"{base}/board?service=PetSite&{window}")
    browser.execute_script("window.localStorage.clear()")
    _open(browser, f"{base}/board?service=PetSite&{window}")
    browser.find_element(By.ID, "board-panel-selector").send_keys('latency_p90{service="PetSite"}')
    browser.find_element(By.ID, "board-panel-name").send_keys("PetSite p90")
    _statuses(browser)
    browser.find_element(By.ID, "board-panel-add").click()
    WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: any(p["title"] == "PetSite p90 · Yours" for p in d.execute_script(PANELS) or [])
    )
    assert "kept for service PetSite" in browser.find_element(By.ID, "board-panel-msg").text
    shared = browser.current_url
    assert "panel=PetSite+p90%7Clatency_p90" in shared
    _no_server_errors(_statuses(browser))
    # Kept in this browser for the service: back without the panel in the URL.
    _open(browser, f"{base}/board?service=PetSite&{window}", settle=1.5)
    titles = [p["title"] for p in _panels(browser)]
    assert "PetSite p90 · Yours" in titles
    # Not kept for another service.
    _open(browser, f"{base}/board?service=frontend&{_window(bundles['nezha'])}", settle=1.5)
    assert "PetSite p90 · Yours" not in [p["title"] for p in _panels(browser)]
    # The shared link draws it for anyone.
    browser.execute_script("window.localStorage.clear()")
    _open(browser, shared)
    assert "PetSite p90 · Yours" in [p["title"] for p in _panels(browser)]
    browser.execute_script("window.localStorage.clear()")


def test_incident_page_draws_suspects_of_any_name(bundle_site, browser):
    base, bundles = bundle_site
    _statuses(browser)
    browser.get(f"{base}/incidents/{bundles['petshop']['incident']}")
    WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.execute_script(
            "const gd = document.querySelector('#incident-graph .js-plotly-plot');"
            "return !!(gd && gd._fullData && gd._fullData.length);"
        )
    )
    rows = browser.execute_script(
        "const gd = document.querySelector('#incident-graph .js-plotly-plot');"
        "return gd.layout.annotations.map((a, i) => [a.text, gd._fullData.filter("
        "t => (t.yaxis || 'y') === (i ? 'y' + (i + 1) : 'y')).reduce((n, t) => n + t._length, 0)]);"
    )
    suspects = [(text, n) for text, n in rows if "{service=" in text]
    assert suspects and all(n > 0 for _text, n in suspects), rows
    # The page ranks first what `causeline analyze BUNDLE` ranks first.
    first = browser.find_element(By.CSS_SELECTOR, "#incident-suspects tbody tr")
    top = bundles["petshop"]["top"]
    labels = ",".join(f"{k}={v}" for k, v in sorted(top["labels"].items()))
    assert f"#1 {top['metric']}{{{labels}}}" in first.text
    link = browser.find_element(By.LINK_TEXT, "open the joint board at the breach")
    assert "service=PetSite" in link.get_attribute("href")
    # Long service names wrap: the suspects table (next step last) fits a laptop's width.
    browser.set_window_size(1024, 900)
    table, page = browser.execute_script(
        "return [document.querySelector('#incident-suspects table').scrollWidth,"
        " document.documentElement.clientWidth];"
    )
    browser.set_window_size(1400, 1000)
    assert table <= page, (table, page)
    _no_server_errors(_statuses(browser))


def test_metric_browser_lists_names_counts_and_labels(bundle_site, browser):
    base, _bundles = bundle_site
    browser.get(f"{base}/metrics-browser")
    table = WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.find_element(By.ID, "metrics-catalog")
    )
    rows = {
        r.find_elements(By.TAG_NAME, "td")[0].text: [
            c.text for c in r.find_elements(By.TAG_NAME, "td")
        ]
        for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")
    }
    assert rows["latency_avg"] == ["latency_avg", "", "37", "service"]
    assert rows["cpu_usage_millicores"] == [
        "cpu_usage_millicores",
        "millicores",
        "10",
        "pod, service",
    ]
    assert rows["service_latency_p90_seconds"][1] == "s"
    box = browser.find_element(By.ID, "metrics-filter")
    box.send_keys("pod_server")
    WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.find_element(By.ID, "metrics-count").text.startswith("3 metrics")
    )
    link = browser.find_element(By.LINK_TEXT, "pod_server_latency_p90_seconds")
    assert "panel=pod_server_latency_p90_seconds" in link.get_attribute("href")


@pytest.mark.parametrize("key", ["petshop", "nezha"])
def test_incident_page_ranks_first_what_analyze_bundle_does(bundle_site, browser, key):
    base, bundles = bundle_site
    _statuses(browser)
    browser.get(f"{base}/incidents/{bundles[key]['incident']}")
    first = WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "#incident-suspects tbody tr")
    )
    top = bundles[key]["top"]
    if top["kind"] == "change":
        assert f"#1 change {top['id']}" in first.text
    else:
        labels = ",".join(f"{k}={v}" for k, v in sorted(top["labels"].items()))
        assert f"#1 {top['metric']}{{{labels}}}" in first.text
    _no_server_errors(_statuses(browser))


def test_the_loop_on_a_real_incident_from_import_to_review(tmp_path, browser):
    """PetShop imported: the headline, acknowledge and resolve on the page, the review says who.

    Its own service without an evaluator: a running one resolves an imported incident on
    its next pass, where the bundle's data ends.
    """
    from causeline.cli import main
    from causeline.commands.up import build_app
    from tests.conftest import scenarios_dir
    from tests.dashboard.conftest import BUNDLES, LiveServer, _evaluate_incident, empty_store
    from tests.helpers import free_port

    folder = scenarios_dir().joinpath(*BUNDLES["petshop"])
    url = empty_store(tmp_path)
    assert main(["import", str(folder), "--database-url", url]) == 0
    number = _evaluate_incident(url, json.loads((folder / "sla.json").read_text()))
    port = free_port()
    app = build_app(
        database_url=url, host="127.0.0.1", port=port, extra={"evaluator_enabled": False}
    )
    with LiveServer(app, port) as live:
        browser.get(f"{live.base}/incidents/{number}")
        wait = WebDriverWait(browser, 30, ignored_exceptions=IGNORED)
        headline = wait.until(lambda d: d.find_element(By.ID, "incident-headline")).text
        assert headline.startswith("Most likely") and "next:" in headline
        wait.until(lambda d: d.find_element(By.ID, "incident-ack")).click()
        wait.until(lambda d: "acknowledged by" in d.find_element(By.ID, "incident-state").text)
        note = browser.find_element(By.ID, "incident-note-text")
        note.send_keys("DynamoDB throttled: raised WCU")
        browser.find_element(By.ID, "incident-resolve").click()
        wait.until(lambda d: "resolved by" in d.find_element(By.ID, "incident-state").text)
        incident = httpx.get(f"{live.base}/api/v1/incidents/{number}", timeout=30).json()
        review = httpx.get(f"{live.base}/api/v1/incidents/{number}/review", timeout=30).text
    who = incident["acknowledged_by"]
    assert incident["status"] == "resolved" and incident["resolved_by"] == who
    lines = review.splitlines()
    for step in (f"Acknowledged by {who}", "DynamoDB throttled: raised WCU", f"resolved by {who}"):
        row = next((line for line in lines if step in line), "")
        assert row.startswith("| 20") and " UTC | " in row, (step, row)  # when, then who
