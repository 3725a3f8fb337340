"""A capacity plan past any real fleet is a wrong figure: 422 naming it, never a crash."""

from __future__ import annotations

import pytest

from correlator.incidents.capacity import MAX_REPLICAS, PlanError, PlanInput, plan

BODY = {"sla_latency_ms": 30, "latency_per_request_ms": 12, "peak_qps": 1e9}


@pytest.mark.parametrize("qps", [5e-324, 1e-300, 1e9 / (MAX_REPLICAS + 1)])
def test_the_planner_refuses_more_replicas_than_it_covers(qps):
    figures = PlanInput(
        sla_latency_ms=30,
        latency_per_request_ms=12,
        qps_per_replica=qps,
        peak_qps=1e9,
        redundancy=10,
    )
    with pytest.raises(PlanError, match="qps_per_replica") as err:
        plan(figures)
    assert err.value.field == "qps_per_replica"


def test_the_largest_plan_still_answers():
    got = plan(PlanInput(30, 12, qps_per_replica=1e9 / MAX_REPLICAS, peak_qps=1e9, redundancy=10))
    assert got["replicas"] == MAX_REPLICAS
    assert got["replicas_with_redundancy"] == 11 * MAX_REPLICAS


def test_the_route_names_the_figure_with_a_422(client):
    resp = client.post("/api/v1/capacity/plan", json=BODY | {"qps_per_replica": 5e-324})
    assert resp.status_code == 422, resp.text
    (detail,) = resp.json()["detail"]
    assert detail["field"] == "qps_per_replica" and "replicas" in detail["msg"]
