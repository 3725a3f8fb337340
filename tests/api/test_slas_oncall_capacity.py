"""SLA documents, on-call rotations and overrides, and the capacity planner."""

from __future__ import annotations

from tests.alerts.samples import SLA as ALERTED_SLA
from tests.helpers import field_of

SLA = {k: v for k, v in ALERTED_SLA.items() if k != "model"} | {
    "description": "p99 under 50 ms at up to 400 QPS"
}
WEEK = 7 * 86400
T0 = 1732492800  # a Monday


def test_sla_crud(client, anon):
    resp = client.post("/api/v1/slas", json=SLA | {"author": "li.wei"})
    assert resp.status_code == 201, resp.text
    got = resp.json()
    assert got["severity"] == "critical" and got["model"] == "click_rank_v3"
    assert got["author"] == "li.wei" and got["description"].startswith("p99")
    assert client.post("/api/v1/slas", json=SLA).status_code == 409
    name = SLA["name"]
    put = client.put(f"/api/v1/slas/{name}", json={**SLA, "threshold": 60, "name": None})
    assert put.status_code == 200 and put.json()["threshold"] == 60
    assert client.get(f"/api/v1/slas/{name}").json()["threshold"] == 60
    assert [s["name"] for s in client.get("/api/v1/slas").json()] == [name]
    mismatch = client.put(f"/api/v1/slas/{name}", json=SLA | {"name": "other"})
    assert mismatch.status_code == 422 and "name" in field_of(mismatch)
    no_op = client.post("/api/v1/slas", json={**SLA, "name": "x", "op": None})
    assert no_op.status_code == 422
    bad = client.post("/api/v1/slas", json={**SLA, "name": "y", "aggregate": "p99"})
    assert bad.status_code == 422 and "aggregate" in field_of(bad)
    assert anon.delete(f"/api/v1/slas/{name}").status_code == 401
    assert client.delete(f"/api/v1/slas/{name}").status_code == 204
    assert client.get(f"/api/v1/slas/{name}").status_code == 404
    assert client.delete(f"/api/v1/slas/{name}").status_code == 404


def test_a_threshold_a_never_negative_metric_always_crosses_is_refused(client, capsys):
    from causeline.cli import main

    resp = client.post("/api/v1/slas", json={**SLA, "name": "neg", "threshold": -1})
    assert resp.status_code == 422, resp.text
    assert "never below 0" in resp.text and "always holds" in resp.text
    below = {**SLA, "name": "under", "op": "<", "threshold": -5}
    assert "never holds" in client.post("/api/v1/slas", json=below).text
    celsius = {**SLA, "name": "cold", "metric": "gpu_temperature_celsius", "threshold": -10}
    assert client.post("/api/v1/slas", json=celsius).status_code == 201  # can go below 0
    url = str(client.app.state.engine.url.render_as_string(hide_password=False))
    args = ["sla", "add", "--name", "cli-neg", "--metric", "model_latency_p99_ms"]
    assert main([*args, "--op", ">", "--threshold=-1", "--database-url", url]) == 2
    assert "never below 0" in capsys.readouterr().err


def test_oncall_rotation_and_override(client):
    algo = {
        "name": "algo weekly",
        "team": "algo",
        "members": [{"name": "li.wei", "contact": "@li.wei"}, "zhang.min"],
        "start": T0,
    }
    assert client.post("/api/v1/oncall/rotations", json=algo).status_code == 201
    assert client.post("/api/v1/oncall/rotations", json=algo).status_code == 409
    infra = {"name": "infra", "team": "infra", "members": ["wang.fang", "chen.jie"], "start": T0}
    client.post("/api/v1/oncall/rotations", json=infra)
    special = {"name": "rank", "team": "algo", "model": "rank_x", "members": ["zhao"], "start": T0}
    client.post("/api/v1/oncall/rotations", json=special)
    week2 = client.get("/api/v1/oncall", params={"model": "click", "at": T0 + WEEK + 10}).json()
    assert week2["algo"]["person"] == "zhang.min" and week2["infra"]["person"] == "chen.jie"
    week3 = client.get("/api/v1/oncall", params={"at": T0 + 2 * WEEK + 10}).json()
    assert week3["algo"] == {
        "person": "li.wei",
        "contact": "@li.wei",
        "source": "rotation",
        "rotation": "algo weekly",
        "until": T0 + 3 * WEEK,
    }
    assert (
        client.get("/api/v1/oncall", params={"model": "rank_x", "at": T0}).json()["algo"]["person"]
        == "zhao"
    )
    swap = {"team": "infra", "person": "sun.li", "start": T0 + 100, "end": T0 + 200}
    assert client.post("/api/v1/oncall/overrides", json=swap).status_code == 201
    during = client.get("/api/v1/oncall", params={"at": T0 + 150}).json()
    assert during["infra"]["person"] == "sun.li" and during["infra"]["source"] == "override"
    before = client.get("/api/v1/oncall", params={"at": T0 - 10}).json()
    assert before["algo"] is None and before["infra"] is None
    backwards = client.post("/api/v1/oncall/overrides", json=swap | {"end": T0})
    assert backwards.status_code == 422
    empty = client.post("/api/v1/oncall/rotations", json=algo | {"name": "n", "members": []})
    assert empty.status_code == 422 and "members" in field_of(empty)
    assert len(client.get("/api/v1/oncall/rotations").json()) == 3
    assert len(client.get("/api/v1/oncall/overrides").json()) == 1


def test_capacity_reproduces_the_articles_example(client):
    body = {
        "sla_latency_ms": 30,
        "latency_per_request_ms": 12,
        "qps_per_replica": 40,
        "peak_qps": 400,
        "redundancy": 0.2,
        "gpu": "T4",
    }
    resp = client.post("/api/v1/capacity/plan", json=body)
    assert resp.status_code == 200, resp.text
    got = resp.json()
    assert got["replicas"] == 10 and got["replicas_with_redundancy"] == 12 and got["fits_sla"]
    assert "ceil(peak 400 QPS / 40 QPS per replica) = ceil(10) = 10" in got["steps"][2]
    assert got["steps"][3] == "with 20% redundancy: ceil(10 x 1.2) = 12"
    slow = client.post("/api/v1/capacity/plan", json=body | {"latency_per_request_ms": 45})
    assert slow.json()["fits_sla"] is False
    missing = client.post("/api/v1/capacity/plan", json=body | {"qps_per_replica": None})
    assert missing.status_code == 422 and "qps_per_replica" in field_of(missing)
    none = client.post(
        "/api/v1/capacity/plan", json=body | {"qps_per_replica": None, "model": "nothing"}
    )
    assert none.status_code == 422 and "qps_per_replica" in field_of(none)
    zero = client.post("/api/v1/capacity/plan", json=body | {"peak_qps": 0})
    assert zero.status_code == 422 and "peak_qps" in field_of(zero)


def test_capacity_from_measured_metrics_and_backlog_metrics(client):
    import time

    now = time.time()
    ts = [now - 60 + 15 * k for k in range(4)]
    series = []
    for inst, qps, p99 in (
        ("i-0", [30, 38, 44, 50], [20, 25, 29, 60]),
        ("i-1", [20] * 4, [10] * 4),
    ):
        labels = {"model": "rank", "instance": inst}
        series += [
            {
                "name": "model_requests_per_second",
                "labels": labels,
                "timestamps": ts,
                "values": qps,
            },
            {"name": "model_latency_p99_ms", "labels": labels, "timestamps": ts, "values": p99},
            {
                "name": "model_latency_p50_ms",
                "labels": labels,
                "timestamps": ts,
                "values": [12] * 4,
            },
            {
                "name": "model_queue_length",
                "labels": labels,
                "timestamps": ts,
                "values": [0, 0, 0, 300],
            },
        ]
    assert client.post("/api/v1/ingest", json={"series": series}).status_code == 200
    got = client.post(
        "/api/v1/capacity/plan", json={"sla_latency_ms": 30, "peak_qps": 400, "model": "rank"}
    ).json()
    # i-0 reached 50 QPS only at 60 ms p99: the best within the SLA is 44.
    assert got["qps_per_replica"] == 44 and got["qps_source"] == "measured"
    assert got["latency_per_request_ms"] == 12 and got["replicas"] == 10
    # A p99 SLA is planned with the p99 a request takes, not the p50.
    p99 = client.post(
        "/api/v1/capacity/plan",
        json={"sla_latency_ms": 30, "peak_qps": 400, "model": "rank"}
        | {"latency_metric": "model_latency_p99_ms"},
    ).json()
    assert p99["latency_per_request_ms"] == 15  # the median of the stored p99s, not 12
    bad = {"sla_latency_ms": 30, "peak_qps": 400, "latency_metric": "gpu_temperature_celsius"}
    assert client.post("/api/v1/capacity/plan", json=bad).status_code == 422
    text = client.get("/metrics").text
    # arrivals 70 QPS + backlog 600 / 30 s drain = 90 QPS at 35 QPS per replica -> 3
    assert 'causeline_recommended_replicas{model="rank"} 3.0' in text
    assert 'causeline_queue_length{model="rank"} 600.0' in text
