"""Names the registry and deploy hook store under a prefix or in a shorter column: 422, never 500.

A topology node is "<kind>:<name>" and a deploy's target "model:<model>", both in 200
characters; a version is kept in 100. PostgreSQL enforces those widths, so a name that fits
the body's own bound but not the column answered 500 there (and was stored whole on SQLite).
"""

from __future__ import annotations

import pytest

from tests.api.test_models import CARD
from tests.helpers import field_of


def _model(client, name: str = "rank") -> None:
    resp = client.post("/api/v1/models", json={"name": name})
    assert resp.status_code == 201, resp.text


def test_a_model_name_leaves_room_for_its_topology_node(client):
    long = client.post("/api/v1/models", json={"name": "m" * 195})
    assert long.status_code == 422, long.text
    assert field_of(long) == {"name"} and "194" in long.text
    _model(client, "m" * 194)
    nodes = {n["id"] for n in client.get("/api/v1/topology").json()["nodes"]}
    assert "model:" + "m" * 194 in nodes


@pytest.mark.parametrize(
    ("field", "value", "most"),
    [("instance", "i" * 192, 191), ("host", "h" * 196, 195), ("version", "v" * 101, 100)],
)
def test_an_instance_field_past_its_column_names_itself(client, field, value, most):
    _model(client)
    body = {"instance": "i-0", "version": "1", "host": "gpu-1"} | {field: value}
    resp = client.post("/api/v1/models/rank/instances", json=body)
    assert resp.status_code == 422, resp.text
    assert field_of(resp) == {field} and str(most) in resp.text
    fits = client.post("/api/v1/models/rank/instances", json=body | {field: value[:most]})
    assert fits.status_code == 201, fits.text


def test_a_card_version_past_its_column_names_itself(client):
    _model(client)
    resp = client.put(f"/api/v1/models/rank/versions/{'v' * 101}/card", json=CARD)
    assert resp.status_code == 422, resp.text
    assert field_of(resp) == {"version"} and "100" in resp.text
    fits = client.put(f"/api/v1/models/rank/versions/{'v' * 100}/card", json=CARD)
    assert fits.status_code == 200, fits.text


def test_a_deploy_hook_model_leaves_room_for_the_change_target(client):
    body = {"model": "m" * 195, "version": "1"}
    resp = client.post("/api/v1/hooks/deploy", json=body)
    assert resp.status_code == 422, resp.text
    assert field_of(resp) == {"model"} and "194" in resp.text
    fits = client.post("/api/v1/hooks/deploy", json=body | {"model": "m" * 194})
    assert fits.status_code == 201, fits.text
    assert fits.json()["target"] == "model:" + "m" * 194
