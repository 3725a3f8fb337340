"""Window logic, forms, access rules and the environment diff."""

from __future__ import annotations

from dashboard import ids
from dashboard.access import resolve_access
from dashboard.changeform import change_body
from dashboard.envdiff import env_diff
from dashboard.pages.board import next_window, view_url
from dashboard.pages.capacity import plan_body


def test_zoom_sets_a_custom_window_and_reset_returns_to_the_preset():
    state = {"model": "m", "start": 0, "end": 3600, "preset": "1h"}
    zoom = {"xaxis.range[0]": "2024-01-01 00:10:00", "xaxis.range[1]": "2024-01-01 00:20:00.5"}
    new = next_window(ids.BOARD_GRAPH, state, "1h", zoom)
    assert new["preset"] == "custom" and new["last_preset"] == "1h"
    assert new["end"] - new["start"] == 600.5
    back = next_window(ids.BOARD_GRAPH, new, "custom", {"xaxis.autorange": True})
    assert back["preset"] == "1h" and back["end"] - back["start"] == 3600
    assert next_window(ids.BOARD_GRAPH, state, "1h", {"autosize": True}) is None


def test_view_url_is_a_deep_link():
    state = {"model": "m", "start": 100.4, "end": 200.6, "preset": "custom"}
    assert view_url(state, ["i-1"], [], ["0", "1"], ["on"]) == (
        "?model=m&from=100&to=201&instance=i-1&gpu=0%2C1&refresh=1"
    )
    assert view_url({**state, "preset": "6h"}, [], [], [], []) == "?model=m&range=6h"


def test_change_form_validates_and_builds_the_body():
    body, errors = change_body(
        {
            "kind": "",
            "owner": "infra",
            "ts": "yesterday",
            "labels": "model=m, bad",
            "canary_percent": "150",
        }
    )
    assert set(errors) == {"kind", "ts", "labels", "canary_percent"}
    body, errors = change_body(
        {
            "kind": "deploy",
            "owner": "algo",
            "ts": "2024-12-03T10:00Z",
            "labels": "model=m, instance=i-3",
            "summary": " v2 ",
        }
    )
    assert not errors
    assert body == {
        "kind": "deploy",
        "owner": "algo",
        "ts": 1733220000.0,
        "labels": {"model": "m", "instance": "i-3"},
        "summary": "v2",
    }
    assert change_body({"ts": "1733220000"}, partial=True) == ({"ts": 1733220000.0}, {})


def test_access_rules():
    local = resolve_access(
        headers={}, bind_host="127.0.0.1", user_header=None, has_token=True, local_user="me"
    )
    assert local.can_write and local.user == "me"
    open_bind = resolve_access(headers={}, bind_host="0.0.0.0", user_header=None, has_token=True)
    assert not open_bind.can_write and "no auth configured" in open_bind.read_only_reason
    proxied = resolve_access(
        headers={"X-Forwarded-User": "alice"},
        bind_host="0.0.0.0",
        user_header="X-Forwarded-User",
        has_token=True,
    )
    assert proxied.can_write and proxied.user == "alice"
    anonymous = resolve_access(
        headers={}, bind_host="0.0.0.0", user_header="X-Forwarded-User", has_token=True
    )
    assert not anonymous.can_write


def test_env_diff_lists_differences_first():
    rows = env_diff(
        {"driver": "550", "libs": {"torch": "2.3"}},
        {"driver": "535", "libs": {"torch": "2.3"}, "cuda": "12.4"},
    )
    assert rows[0][3] is False and rows[-1] == ("libs.torch", "2.3", "2.3", True)
    assert ("cuda", "—", "12.4", False) in rows


def test_capacity_inputs_must_be_numbers():
    body, errors = plan_body({"peak_qps": "400", "redundancy": "x", "gpu": "T4", "model": ""})
    assert body == {"peak_qps": 400.0, "gpu": "T4"} and errors == {"redundancy": "must be a number"}


def test_incident_draws_the_top_five_with_changes_as_markers():
    from dashboard.pages.incidents import drawn_suspects

    suspects = [
        {"rank": 1, "kind": "change", "id": "c"},
        {"rank": 2, "kind": "series", "metric": "q", "labels": {"model": "m"}},
        {"rank": 3, "kind": "series", "metric": "q", "labels": {"model": "m"}},
        {"rank": 4, "kind": "series", "metric": "q", "labels": {"model": "other"}},
        {"rank": 5, "kind": "series", "metric": "len_bucket", "labels": {}},
        {"rank": 6, "kind": "series", "metric": "sixth", "labels": {}},
    ]
    rows, changes = drawn_suspects(suspects)
    assert [s["rank"] for s in rows] == [2, 4, 5]
    assert [s["rank"] for s in changes] == [1]
