"""The change calendar API: register, unplanned flag, update, query, deploy webhook."""

from __future__ import annotations

import time

from tests.helpers import field_of

DAY = 86400


def test_planned_change_is_not_unplanned_once_done(client):
    now = time.time()
    body = {
        "kind": "deploy",
        "owner": "algo",
        "person": "li.wei",
        "target": "model:click_rank_v3",
        "summary": "3.3.0 canary",
        "labels": {"model": "click_rank_v3"},
        "scope": "instance i-3, 5% of traffic",
        "planned_ts": now + 2 * DAY,
        "rollout_stage": "canary",
        "canary_percent": 5,
        "version": "3.3.0",
        "author": "li.wei",
    }
    resp = client.post("/api/v1/changes", json=body)
    assert resp.status_code == 201, resp.text
    got = resp.json()
    assert got["status"] == "planned" and got["unplanned"] is False
    assert got["author"] == "li.wei" and got["rollout_stage"] == "canary"
    done = client.put(f"/api/v1/changes/{got['id']}", json={"ts": now + 2 * DAY + 60})
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "done" and done.json()["unplanned"] is False
    assert done.json()["author"] == "ci"  # the token's name when no author is given


def test_change_done_without_a_day_notice_is_unplanned(client):
    now = time.time()
    late = client.post(
        "/api/v1/changes",
        json={"kind": "config", "owner": "infra", "planned_ts": now + 3600, "ts": now + 3600},
    ).json()
    assert late["unplanned"] is True
    adhoc = client.post("/api/v1/changes", json={"kind": "image", "owner": "infra", "ts": now})
    assert adhoc.json()["unplanned"] is True
    listed = client.get("/api/v1/changes", params={"start": now - 10, "end": now + 7200}).json()
    assert [c["id"] for c in listed] == [adhoc.json()["id"], late["id"]]
    only = client.get("/api/v1/changes", params={"kind": "config"}).json()
    assert [c["id"] for c in only] == [late["id"]]
    assert client.get(f"/api/v1/changes/{late['id']}").json()["kind"] == "config"


def test_change_errors_name_the_field(client, anon):
    bad = client.post("/api/v1/changes", json={"kind": "reboot", "owner": "algo"})
    assert bad.status_code == 422 and "kind" in field_of(bad)
    bad = client.post("/api/v1/changes", json={"kind": "deploy", "owner": "ops"})
    assert bad.status_code == 422 and "owner" in field_of(bad)
    bad = client.post(
        "/api/v1/changes", json={"kind": "deploy", "owner": "algo", "canary_percent": 150}
    )
    assert bad.status_code == 422 and "canary_percent" in field_of(bad)
    bad = client.post("/api/v1/changes", json={"kind": "deploy", "owner": "algo", "colour": 1})
    assert bad.status_code == 422 and "colour" in field_of(bad)
    ok = client.post("/api/v1/changes", json={"id": "c1", "kind": "deploy", "owner": "algo"})
    assert ok.status_code == 201
    dup = client.post("/api/v1/changes", json={"id": "c1", "kind": "deploy", "owner": "algo"})
    assert dup.status_code == 409 and "id" in field_of(dup)
    assert client.put("/api/v1/changes/nope", json={"ts": 1}).status_code == 404
    assert client.get("/api/v1/changes/nope").status_code == 404
    assert client.put("/api/v1/changes/c1", json={"kind": None}).status_code == 422
    assert anon.post("/api/v1/changes", json={"kind": "deploy", "owner": "algo"}).status_code == 401


def test_deploy_webhook_is_idempotent_by_id(client, anon):
    body = {
        "model": "click_rank_v3",
        "version": "3.3.0",
        "stage": "canary",
        "canary_percent": 5,
        "pipeline": "gitlab#4411",
        "id": "gl-4411",
        "ts": 1733131260,
    }
    first = client.post("/api/v1/hooks/deploy", json=body)
    assert first.status_code == 201, first.text
    got = first.json()
    assert got["kind"] == "deploy" and got["target"] == "model:click_rank_v3"
    assert got["labels"] == {"model": "click_rank_v3", "version": "3.3.0"}
    assert got["rollout_stage"] == "canary" and got["unplanned"] is True
    assert got["pipeline"] == "gitlab#4411" and "url" not in got
    run = "https://ci.example/run/4411"
    again = client.post("/api/v1/hooks/deploy", json=body | {"stage": "full", "url": run})
    assert again.json()["id"] == "gl-4411" and again.json()["rollout_stage"] == "full"
    assert again.json()["url"] == run and again.json()["pipeline"] == "gitlab#4411"
    assert len(client.get("/api/v1/changes").json()) == 1
    assert client.post("/api/v1/hooks/deploy", json={"model": "m"}).status_code == 422
    assert anon.post("/api/v1/hooks/deploy", json=body).status_code == 401


def test_deploy_webhook_completes_the_planned_change(client):
    now = time.time()
    planned = client.post(
        "/api/v1/changes",
        json={
            "kind": "deploy",
            "owner": "algo",
            "target": "model:m",
            "version": "2.0",
            "planned_ts": now + 2 * DAY,
            "person": "li.wei",
        },
    ).json()
    hook = {"model": "m", "version": "2.0", "stage": "full", "ts": now + 2 * DAY + 30}
    got = client.post("/api/v1/hooks/deploy", json=hook).json()
    assert got["id"] == planned["id"] and got["status"] == "done"
    assert got["unplanned"] is False and got["person"] == "li.wei"
