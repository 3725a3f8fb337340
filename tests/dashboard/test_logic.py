"""Window logic, forms, access rules and the environment diff."""

from __future__ import annotations

import time

from dashboard import ids
from dashboard.access import resolve_access
from dashboard.changeform import change_body
from dashboard.client import Routes
from dashboard.envdiff import env_diff
from dashboard.pages.board import (
    effective_zone,
    next_window,
    refresh_seconds,
    typed_window,
    view_url,
)
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


def test_zoom_on_any_panel_and_in_a_local_zone_gives_the_utc_window():
    state = {"model": "m", "start": 0, "end": 3600, "preset": "1h"}
    zoom = {"xaxis7.range[0]": "2024-01-01 01:10:00", "xaxis7.range[1]": "2024-01-01 01:20:00"}
    new = next_window(ids.BOARD_GRAPH, state, "1h", zoom, offset=3600)
    assert new["start"] == 1704067800.0 and new["end"] - new["start"] == 600  # 00:10 UTC
    reset = next_window(ids.BOARD_GRAPH, new, "custom", {"xaxis12.autorange": True})
    assert reset["preset"] == "1h"
    ranged = next_window(ids.BOARD_GRAPH, state, "1h", {"xaxis3.range": [0, 60_000]})
    assert (ranged["start"], ranged["end"]) == (0, 60)


def test_a_typed_range_reads_relative_and_local_times_and_says_what_is_wrong():
    now = 1_704_067_200.0  # 2024-01-01 00:00 UTC
    state = {"model": "m", "start": 0, "end": 1, "preset": "6h"}
    new, error = typed_window(state, "now-2h", "", "UTC", now=now)
    assert error == "" and (new["start"], new["end"]) == (now - 7200, now)
    assert new["preset"] == "custom" and new["last_preset"] == "6h"
    berlin, _ = typed_window(
        state, "2024-01-01 00:00", "2024-01-01 01:00", "Europe/Berlin", now=now
    )
    assert berlin["start"] == now - 3600  # midnight in Berlin is 23:00 UTC
    assert typed_window(state, "yesterday", "now", "UTC", now=now) == (
        None,
        "From: give a time such as now-2h, 2h ago, 2024-11-25 08:00 (UTC) or unix seconds",
    )
    assert typed_window(state, "now", "now-1h", "UTC", now=now)[1] == "To must be after From"
    assert typed_window(state, "now-100d", "now", "UTC", now=now)[1] == "at most 90 days at once"


def test_refresh_choices_and_zones():
    assert [refresh_seconds(v) for v in ("0", "10", "30", "60", "300", "1", "7", None, "x")] == [
        0, 10, 30, 60, 300, 30, 0, 0, 0,
    ]  # fmt: skip
    assert effective_zone("local", "Asia/Shanghai") == "Asia/Shanghai"
    assert effective_zone("UTC", "Asia/Shanghai") == effective_zone("local", None) == "UTC"


def test_view_url_is_a_deep_link():
    state = {"model": "m", "start": 100.4, "end": 200.6, "preset": "custom"}
    assert view_url(state, ["i-1"], [], ["0", "1"], 60, zone="local") == (
        "?model=m&from=100&to=201&instance=i-1&gpu=0%2C1&refresh=60&tz=local"
    )
    assert view_url({**state, "preset": "6h"}, [], [], [], 0) == "?model=m&range=6h"
    assert view_url({**state, "preset": "15m"}, [], [], [], "1") == "?model=m&range=15m&refresh=30"


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


class FakeClient(Routes):
    """Answers a page's API calls from a dict of path -> answer; records what it posted.

    The route names (``slas()``, ``incident(n)``...) come from ``Routes``, over ``get``.
    """

    def __init__(self, answers: dict, labels: dict | None = None):
        self.answers, self.labels, self.posted = answers, labels or {}, []

    def get(self, path, **_params):
        from dashboard.client import ApiError

        if path not in self.answers:
            raise ApiError(404, f"the service has nothing at {path}")
        return self.answers[path]

    def label_values(self, name, match=None, limit=1000):
        return self.labels.get((name, match), [])

    def post(self, path, body=None, *, author=None):
        self.posted.append((path, body))
        return self.get(path)

    def query_range(self, matches, start, end, step=None):
        return self.answers.get(("query_range", tuple(matches)), [])


def _context(client):
    from dashboard.context import Context
    from dashboard.settings import DashboardSettings

    return Context(client, DashboardSettings(api_url="http://127.0.0.1:9"))


def _find(tree, id_):
    if getattr(tree, "id", None) == id_:
        return tree
    children = getattr(tree, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            found = _find(child, id_)
            if found is not None:
                return found
    return None


def _text(tree) -> str:
    if tree is None or isinstance(tree, str | int | float):
        return "" if tree is None else str(tree)
    children = getattr(tree, "children", None)
    return " ".join(_text(c) for c in (children if isinstance(children, list) else [children]))


def _cells(table) -> list[list[str]]:
    thead, tbody = table.children
    head = [[_text(th) for th in thead.children.children]]
    return head + [[_text(td) for td in tr.children] for tr in tbody.children]


def test_models_page_counts_instances_as_the_board_does():
    from dashboard.pages import models

    serves = [{"from": f"instance:i-{i}", "to": "model:m", "kind": "serves"} for i in range(4)]
    client = FakeClient(
        {
            "/api/v1/models": [
                {"name": "m", "versions": ["1"], "instances": 0},
                {"name": "n", "versions": [], "instances": 0},
                {"name": "quiet", "versions": [], "instances": 0},
            ],
            "/api/v1/topology": {"nodes": [], "edges": serves},
            "/api/v1/fingerprints": [],
        },
        labels={("instance", '{model="n"}'): ["n-1", "n-2"]},
    )
    rows = _cells(_find(models.layout(_context(client)), "models-table"))
    assert rows[0][-1] == "instances"
    assert {r[0]: r[-1] for r in rows[1:]} == {"m": "4", "n": "2", "quiet": "0"}


def test_env_diff_of_identical_fingerprints_says_no_differences():
    from dashboard.envdiff import diff_view

    flags = [f"flag_{i:03d}" for i in range(90)]
    fp = {"driver": "550", "cpu": {"flags": flags}, "packages": {"torch": None}}
    shown = diff_view(env_diff(fp, fp), ("a", "b"))
    assert "No differences" in _text(shown[0]) and len(shown) == 1  # no table of equal keys
    every = diff_view(env_diff(fp, fp), ("a", "b"), show_all=True)
    assert [r[0] for r in _cells(every[1])[1:]] == ["cpu.flags", "driver", "packages.torch"]
    folded = every[1].children[1].children[0].children[1].children  # cpu.flags on the left
    assert _text(folded.children[0]) == "90 items"  # folded, not a wall of flags


def test_env_diff_shows_only_differing_keys_and_marks_the_differing_items():
    from dash import html

    from dashboard.envdiff import diff_view

    flags = [f"flag_{i:03d}" for i in range(90)]
    left = {"driver": "550", "cpu": {"flags": flags}, "python": "3.11"}
    right = {"driver": "535", "cpu": {"flags": [*flags[:-1], "amx"]}, "python": "3.11"}
    verdict, grid = diff_view(env_diff(left, right), ("a", "b"))
    assert "2 of 3 keys differ" in _text(verdict)
    rows = grid.children[1].children
    assert [_text(r.children[0]) for r in rows] == ["cpu.flags", "driver"]

    def marked(cell):
        return [_text(c) for c in cell.children.children if isinstance(c, html.Mark)]

    assert marked(rows[0].children[1]) == ["flag_089"] and marked(rows[0].children[2]) == ["amx"]
    folded = rows[0].children[1].children.children[-1]
    assert isinstance(folded, html.Details) and "89 on both sides" in _text(folded.children[0])


def test_change_form_examples_are_times_around_now():
    from dashboard.pages.changes import time_examples
    from dashboard.timeparse import parse_when

    now = 1_796_290_000.0
    examples = time_examples(now)
    planned = [parse_when(e, now=now) for e in examples["planned_ts"].split(" or ")]
    assert all(now < t <= now + 3 * 3600 for t in planned), examples
    happened = [parse_when(e, now=now) for e in examples["ts"].split(" or ")]
    assert all(now - 3600 < t <= now for t in happened), examples
    assert change_body({"kind": "deploy", "owner": "algo", "ts": "now-10m"})[1] == {}


def test_every_changes_table_column_has_a_header():
    from dashboard.pages.changes import change_listing
    from dashboard.pages.incidents import changes_table

    change = {"id": "c1", "ts": 1.0, "kind": "config", "owner": "infra", "unplanned": True}
    for grid in (changes_table([change]), change_listing([change])):
        head, row = _cells(grid)
        assert all(h.strip() for h in head), head
        assert head[row.index("unplanned")] == "flag"


def test_capacity_page_shows_the_plan_of_the_first_model_on_load():
    from dashboard.pages import capacity

    plan = {"replicas": 2, "replicas_with_redundancy": 3, "fits_sla": True, "steps": ["x"]}
    plan |= {"qps_per_replica": 242.7821, "qps_source": "measured"}
    client = FakeClient(
        {"/api/v1/models": [{"name": "m"}, {"name": "n"}], "/api/v1/capacity/plan": plan}
    )
    page = capacity.layout(_context(client))
    shown = _text(_find(page, "capacity-result"))
    assert "3 replicas (2 before redundancy)" in shown
    assert "QPS per replica: 243 (measured)" in shown
    ((path, body),) = client.posted
    assert body["model"] == "m" and "qps_per_replica" not in body  # measured for the model
    assert capacity.initial_values({"model": "n"}, ["m"])["model"] == "n"
    assert capacity.initial_values({}, [])["qps_per_replica"] == 40  # no model: the example


def test_capacity_starts_from_the_models_own_sla_peak_and_gpu():
    """It assumed a 30 ms SLA, 400 QPS and a T4, and compared p50 with a p99 SLA."""
    import numpy as np

    from correlator.bundle import Series
    from dashboard.pages import capacity

    now = time.time()
    ts = np.arange(now - 3600, now, 15.0)
    qps = [Series("model_requests_per_second", {"model": "m", "instance": f"i-{i}"}, ts,
                  np.full(ts.size, 270.0 + i)) for i in range(4)]  # fmt: skip
    plan = {"replicas": 5, "replicas_with_redundancy": 6, "fits_sla": True, "steps": ["x"]}
    plan |= {"qps_per_replica": 300.0, "qps_source": "measured"}
    selector = 'model_requests_per_second{model="m"}'
    client = FakeClient(
        {
            "/api/v1/models": [{"name": "m"}],
            "/api/v1/slas": [
                {
                    "metric": "model_latency_p99_ms",
                    "labels": {"model": "m"},
                    "op": ">",
                    "threshold": 50.0,
                }  # fmt: skip
            ],
            "/api/v1/fingerprints": [
                {"model": "m", "fingerprint": {"gpu": {"devices": [{"name": "NVIDIA A10"}]}}}
            ],
            ("query_range", (selector,)): qps,
            "/api/v1/capacity/plan": plan,
        }
    )
    page = capacity.layout(_context(client))
    ((_path, body),) = client.posted
    assert body["sla_latency_ms"] == 50.0 and body["latency_metric"] == "model_latency_p99_ms"
    assert body["peak_qps"] == 1086.0 and body["gpu"] == "NVIDIA A10"
    assert "4 replicas report now" in _text(_find(page, "capacity-source"))


def test_incident_scope_reads_as_labels_not_a_mapping():
    from dashboard.pages.incidents import _scope_text

    local = {"kind": "local", "labels": {"host": "gpu-node-2", "instance": "i-3"}}
    assert _scope_text(local) == "local (host=gpu-node-2, instance=i-3)"
    assert _scope_text({"kind": "global", "series": 4, "affected": 3}) == "global"
    assert _scope_text({"kind": "single", "labels": {"service": "PetSite"}}) == (
        "single (service=PetSite)"
    )
    assert _scope_text({}) == "unknown"


def test_a_suspects_lead_reads_as_a_duration():
    from dashboard.timeparse import lead

    assert [lead(45), lead(488), lead(9000), lead(-164)] == [
        "45 s",
        "8 min",
        "2.5 h",
        "3 min after",
    ]
    assert lead(None) == "" and lead(float("nan")) == ""


class OnCallClient(FakeClient):
    """Answers /api/v1/oncall per model: a rotation covers model m only."""

    def get(self, path, **params):
        if path == "/api/v1/oncall":
            person = {"person": "li.wei", "source": "rotation", "rotation": "m algo"}
            return {"algo": person} if params.get("model") == "m" else {}
        return super().get(path, **params)


def test_on_call_now_lists_each_model_with_a_rotation_of_its_own():
    from dashboard.pages import oncall

    rotation = {"name": "m algo", "team": "algo", "model": "m", "members": ["li.wei"], "start": 0}
    old = {"team": "infra", "model": "gone", "person": "x", "start": 0, "end": 1}  # long over
    client = OnCallClient(
        {"/api/v1/oncall/rotations": [rotation], "/api/v1/oncall/overrides": [old]}
    )
    listing = oncall._listing(_context(client), "")
    now = _find(listing[1], "oncall-now")
    assert "every model algo nobody" in _text(now) and "m algo li.wei" in _text(now)
    assert "gone" not in _text(now)
    one = oncall._listing(_context(client), "m")  # a model asked for: that model only
    assert "every model" not in _text(_find(one[1], "oncall-now"))


def test_the_incident_page_gives_a_percentage_only_for_a_measured_confidence():
    from correlator.analysis import confidence
    from dashboard.pages.incidents import MEASURED, _confidence

    # Every reading of a measured chance is one the page knows, and it shows the chance.
    for p in (0.9, 0.5, 0.3):
        says = confidence.say(p)
        assert says in MEASURED
        text = _confidence({"confidence": p, "confidence_says": says}).children
        chance = f"({p:.0%} chance it is a root cause, as measured on past incidents)"
        assert text == f"Top suspect: {says} {chance}"
    # Where no past incident was of the size, no chance was measured: none is shown.
    unlike = confidence.say(0.5, unlike=True)
    assert _confidence({"confidence": 0.5, "confidence_says": unlike}).children == (
        f"Top suspect: {unlike}"
    )
