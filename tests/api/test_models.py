"""Model registry API: models, cards validated on submit, instances, impact review."""

from __future__ import annotations

from tests.helpers import field_of

CARD = {
    "purpose": "rank feed items by predicted click probability",
    "input_schema": {
        "type": "object",
        "required": ["user_features"],
        "properties": {"user_features": {"type": "array", "items": {"type": "number"}}},
    },
    "output_schema": {"type": "object", "properties": {"scores": {"type": "array"}}},
    "feature_dependencies": [{"service": "user-features", "features": ["age", "ctr_7d"]}],
    "offline_evaluation": {"dataset": "2024-11 holdout", "metrics": {"auc": 0.781}},
    "resource_needs": {"gpu": "T4", "gpu_memory_gb": 2, "qps_per_replica": 40},
    "known_risks": ["input length above 512 tokens triples latency"],
    "random_seed": 42,
    "locked_dependencies": "# lock\ntorch==2.3.1\nnumpy==1.26.4\n",
}


def test_model_card_round_trip(client):
    resp = client.post("/api/v1/models", json={"name": "click_rank_v3", "author": "li.wei"})
    assert resp.status_code == 201, resp.text
    path = "/api/v1/models/click_rank_v3/versions/3.3.0/card"
    put = client.put(path, json=CARD | {"author": "li.wei"})
    assert put.status_code == 200, put.text
    assert put.json()["author"] == "li.wei" and put.json()["card"]["random_seed"] == 42
    assert client.get(path).json()["card"] == CARD
    model = client.get("/api/v1/models/click_rank_v3").json()
    assert model["versions"][0]["version"] == "3.3.0" and model["versions"][0]["has_card"]
    assert set(model["oncall"]) == {"algo", "infra"}
    listed = client.get("/api/v1/models").json()
    assert listed[0]["name"] == "click_rank_v3" and listed[0]["versions"] == ["3.3.0"]


def test_model_card_errors_name_the_field(client):
    client.post("/api/v1/models", json={"name": "m1"})
    path = "/api/v1/models/m1/versions/1/card"
    missing = client.put(path, json={k: v for k, v in CARD.items() if k != "known_risks"})
    assert missing.status_code == 422 and field_of(missing) == {"known_risks"}
    bad_schema = client.put(path, json=CARD | {"input_schema": {"type": "tensor"}})
    assert bad_schema.status_code == 422 and field_of(bad_schema) == {"input_schema"}
    unpinned = client.put(path, json=CARD | {"locked_dependencies": "torch\n"})
    assert unpinned.status_code == 422 and field_of(unpinned) == {"locked_dependencies"}
    seed = client.put(path, json=CARD | {"random_seed": "42"})
    assert seed.status_code == 422 and field_of(seed) == {"random_seed"}
    assert client.get(path).status_code == 404
    assert client.put("/api/v1/models/nope/versions/1/card", json=CARD).status_code == 404
    assert client.get("/api/v1/models/nope").status_code == 404
    dup = client.post("/api/v1/models", json={"name": "m1"})
    assert dup.status_code == 409 and "name" in field_of(dup)
    assert client.post("/api/v1/models", json={"name": ""}).status_code == 422
    assert client.post("/api/v1/models/nope/instances", json={"instance": "i"}).status_code == 404


def test_impact_review_from_topology_and_cards(client):
    for name in ("rank_a", "rank_b", "recall_c"):
        client.post("/api/v1/models", json={"name": name})
    for model, inst, version in (
        ("rank_a", "a-0", "1"),
        ("rank_a", "a-1", "1"),
        ("rank_b", "b-0", "2"),
    ):
        resp = client.post(
            f"/api/v1/models/{model}/instances",
            json={"instance": inst, "version": version, "host": "gpu-node-1"},
        )
        assert resp.status_code == 201, resp.text
    # rank_a calls the shared service in the topology; rank_b declares it in its card only.
    with client.app.state.engine.begin() as conn:
        from correlator.store.topology import upsert_topology

        upsert_topology(
            conn=conn,
            topology={
                "nodes": [{"id": "service:user-features", "kind": "feature_service"}],
                "edges": [
                    {"from": "model:rank_a", "to": "service:user-features", "kind": "calls"},
                    {"from": "model:recall_c", "to": "service:item-features", "kind": "calls"},
                ],
            },
        )
    client.put("/api/v1/models/rank_b/versions/2/card", json=CARD)
    got = client.get("/api/v1/impact", params={"service": "user-features"}).json()
    assert [(m["model"], m["via"]) for m in got["models"]] == [
        ("rank_a", ["topology"]),
        ("rank_b", ["card"]),
    ]
    assert got["models"][0]["instances"] == ["a-0", "a-1"]
    assert got["models"][1]["versions"] == ["2"]
    assert got["instances"] == ["a-0", "a-1", "b-0"]
    none = client.get("/api/v1/impact", params={"service": "nothing"}).json()
    assert none["models"] == [] and none["count"] == 0
    assert client.get("/api/v1/impact").status_code == 422
    topo = client.get("/api/v1/topology").json()
    assert {"from": "instance:a-0", "to": "host:gpu-node-1", "kind": "runs_on"} in topo["edges"]
