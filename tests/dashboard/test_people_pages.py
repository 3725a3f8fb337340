"""The on-call and SLA pages: list, add a rotation, cover a shift, change an SLA and its doc."""

from __future__ import annotations

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from dashboard.pages.oncall import override_body
from dashboard.pages.slas import edited, objective
from dashboard.rotationform import parse_members, rotation_body
from tests.dashboard.test_browser import IGNORED, _severe

T0 = 1_733_131_500.0


def test_override_form_checks_each_field():
    body, errors = override_body({"team": "infra", "person": " sam ", "end": "1733140000"}, T0)
    assert errors == {} and body["person"] == "sam"
    assert body["start"] == T0 and body["end"] == 1_733_140_000.0
    _, errors = override_body({"team": "ops", "start": "yesterday", "end": str(T0 + 60)}, T0)
    assert set(errors) == {"team", "person", "start"}
    _, errors = override_body({"team": "algo", "person": "a", "end": "soon"}, T0)
    assert set(errors) == {"end"}
    _, errors = override_body({"team": "algo", "person": "a", "end": str(T0 - 60)}, T0)
    assert errors == {"end": "must be after the start"}


def test_rotation_form_checks_each_field_and_reads_members_in_turn():
    values = {
        "name": " ranker infra ",
        "team": "infra",
        "members": "wang.fang (demo) <@wang.fang>, sam.ops",
        "period_days": "14",
    }
    body, errors = rotation_body(values, T0)
    assert errors == {}
    assert body == {
        "name": "ranker infra",
        "team": "infra",
        "model": "",
        "members": [
            {"name": "wang.fang (demo)", "contact": "@wang.fang"},
            {"name": "sam.ops", "contact": ""},
        ],
        "start": T0,
        "period_days": 14.0,
    }
    assert rotation_body(values | {"start": "now-2d", "period_days": ""}, T0)[0]["start"] == (
        T0 - 2 * 86400
    )
    _, errors = rotation_body(
        {"team": "ops", "members": " , ", "start": "soon", "period_days": "0"}, T0
    )
    assert set(errors) == {"name", "team", "members", "start", "period_days"}
    _, errors = rotation_body(values | {"members": "a <b> c"}, T0)
    assert "not a name" in errors["members"]
    with pytest.raises(ValueError, match="<@x>"):
        parse_members("<@x>")  # a contact without a name


def test_sla_objective_and_edit_keep_what_the_form_does_not_show():
    sla = {
        "name": "p99",
        "metric": "lat_ms",
        "labels": {"model": "m"},
        "aggregate": "max",
        "op": ">",
        "threshold": 50.0,
        "for_seconds": 120.0,
        "severity": "major",
        "description": "old",
        "id": 4,
        "author": "x",
    }
    assert objective(sla) == "max lat_ms{model=m} > 50 for 120 s"
    assert (
        objective({"metric": "a", "labels": {}}) == "max a{}: breaches declared by an outside alert"
    )
    body = edited(sla, 80, None, "critical", "new doc")
    assert body == {
        "metric": "lat_ms",
        "labels": {"model": "m"},
        "aggregate": "max",
        "op": ">",
        "threshold": 80,
        "for_seconds": 120.0,
        "severity": "critical",
        "description": "new doc",
    }


@pytest.mark.integration
def test_cover_a_shift_add_a_rotation_and_edit_an_sla_in_the_browser(demo_site, browser, artifacts):
    base, _demo, token = demo_site
    auth = {"Authorization": f"Bearer {token}"}
    sla = {
        "name": "browser-test p99",
        "metric": "model_latency_p99_ms",
        "labels": {"model": "browser-test-model"},
        "op": ">",
        "threshold": 40,
        "for_seconds": 60,
    }
    assert httpx.post(f"{base}/api/v1/slas", json=sla, headers=auth, timeout=30).status_code == 201

    browser.get(f"{base}/oncall?model=browser-test-model")
    WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.find_elements(By.ID, "oncall-now")
    )
    assert "nobody" in browser.find_element(By.ID, "oncall-now").text
    browser.find_element(By.ID, "oncall-team").click()
    WebDriverWait(browser, 10, ignored_exceptions=IGNORED).until(
        lambda d: [
            o
            for o in d.find_elements(By.CSS_SELECTOR, ".dash-dropdown-options [role=option]")
            if o.text.strip() == "infra"
        ]
    )[0].click()
    browser.find_element(By.TAG_NAME, "h2").click()
    browser.find_element(By.ID, "oncall-model").send_keys("browser-test-model")
    browser.find_element(By.ID, "oncall-person").send_keys("sam.ops")
    browser.find_element(By.ID, "oncall-contact").send_keys("@sam")
    browser.find_element(By.ID, "oncall-end").send_keys("2100-01-01T00:00Z")
    browser.find_element(By.ID, "oncall-reason").send_keys("covering for li.wei")
    browser.find_element(By.ID, "oncall-submit").click()
    try:
        WebDriverWait(browser, 20, ignored_exceptions=IGNORED).until(
            lambda d: "sam.ops is on call for infra" in d.find_element(By.ID, "oncall-msg").text
        )
    except Exception:
        raise AssertionError(browser.find_element(By.ID, "_pages_content").text) from None
    now = browser.find_element(By.ID, "oncall-now").text
    assert "sam.ops" in now and "override" in now
    assert "covering for li.wei" in browser.find_element(By.ID, "oncall-overrides").text
    browser.save_screenshot(str(artifacts / "oncall.png"))
    who = httpx.get(
        f"{base}/api/v1/oncall", params={"model": "browser-test-model"}, headers=auth, timeout=30
    ).json()
    assert who["infra"]["person"] == "sam.ops"

    browser.find_element(By.ID, "oncall-rot-team").click()
    WebDriverWait(browser, 10, ignored_exceptions=IGNORED).until(
        lambda d: [
            o
            for o in d.find_elements(By.CSS_SELECTOR, ".dash-dropdown-options [role=option]")
            if o.text.strip() == "algo"
        ]
    )[0].click()
    browser.find_element(By.TAG_NAME, "h2").click()
    assert browser.find_element(By.ID, "oncall-rot-model").get_attribute("value") == (
        "browser-test-model"
    )
    browser.find_element(By.ID, "oncall-rot-name").send_keys("browser-test algo")
    browser.find_element(By.ID, "oncall-rot-members").send_keys("ana.test <@ana>, bo.test")
    browser.find_element(By.ID, "oncall-rot-start").send_keys("now-1h")
    for expected in ("ana.test holds algo first", "a rotation named browser-test algo exists"):
        browser.find_element(By.ID, "oncall-rot-submit").click()  # the second time: taken
        WebDriverWait(browser, 20, ignored_exceptions=IGNORED).until(
            lambda d, expected=expected: expected in d.find_element(By.ID, "oncall-rot-msg").text
        )
    assert "browser-test algo" in browser.find_element(By.ID, "oncall-rotations").text
    assert "ana.test" in browser.find_element(By.ID, "oncall-now").text

    browser.get(f"{base}/slas?sla=browser-test p99")
    WebDriverWait(browser, 30, ignored_exceptions=IGNORED).until(
        lambda d: d.find_element(By.ID, "slas-threshold").get_attribute("value") == "40"
    )
    assert "max model_latency_p99_ms{model=browser-test-model} > 40 for 60 s" in (
        browser.find_element(By.ID, "slas-table").text
    )
    box = browser.find_element(By.ID, "slas-threshold")
    box.clear()
    box.send_keys("45")
    browser.find_element(By.ID, "slas-doc").send_keys(
        "p99 under 45 ms. Runbook: https://wiki.example/browser-test"
    )
    browser.find_element(By.ID, "slas-save").click()
    WebDriverWait(browser, 20, ignored_exceptions=IGNORED).until(
        lambda d: "Saved browser-test p99" in d.find_element(By.ID, "slas-msg").text
    )
    stored = httpx.get(f"{base}/api/v1/slas/browser-test p99", headers=auth, timeout=30).json()
    assert stored["threshold"] == 45 and stored["for_seconds"] == 60
    assert "https://wiki.example/browser-test" in stored["description"]
    assert "> 45 for 60 s" in browser.find_element(By.ID, "slas-table").text
    browser.save_screenshot(str(artifacts / "slas.png"))
    assert not _severe(browser)


def test_the_sla_form_changes_the_operator_too():
    sla = {"metric": "lat_ms", "labels": {}, "aggregate": "max", "op": ">", "threshold": 5.0}
    assert edited(sla, None, None, None, None, "<")["op"] == "<"
    assert edited(sla, None, None, None, None)["op"] == ">"


def test_an_imported_incident_opens_the_board_on_its_own_window():
    from dashboard.pages.incidents import board_query

    sla = {"labels": {"model": "m"}}
    live = {"breach_start": 10_000.0, "breach_end": 10_600.0}
    assert board_query(live, sla) == {"model": "m", "from": 6_400, "to": 12_400}
    imported = live | {"imported": {"source": "b", "start": 9_000.0, "end": 11_000.0}}
    assert board_query(imported, sla) == {"model": "m", "from": 9_000, "to": 11_000}
