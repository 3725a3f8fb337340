"""Each top suspect names a person and a next step from its kind."""

from __future__ import annotations

from correlator.incidents.advice import TOP, advise, runbook

ONCALL = {"algo": {"person": "li.wei"}, "infra": {"person": "sam.ops"}}
CHANGES = [
    {
        "id": "chg-7",
        "kind": "deploy",
        "target": "model:ranker",
        "version": "3.3.0",
        "person": "ci-bot",
        "author": "ana",
        "url": "https://ci.example/run/4411",
    }
]


def _series(metric: str, labels: dict, owner: str = "infra", **more) -> dict:
    return {"kind": "series", "metric": metric, "labels": labels, "owner": owner, **more}


def test_each_kind_gets_its_step_and_person():
    suspects = [
        {"kind": "change", "id": "chg-7", "owner": "algo"},
        _series("model_input_length_bucket", {"model": "ranker"}, "algo", drift={"psi": 0.6}),
        _series("gpu_utilization_percent", {"host": "gpu-node-2", "gpu": "0"}),
        _series("feature_service_latency_p99_ms", {"service": "user-features"}),
        _series("model_queue_length", {"model": "ranker"}, "nobody-team"),
    ]
    out = advise(suspects, changes=CHANGES, oncall=ONCALL, model="ranker")
    change, drift, gpu, service, queue = out
    assert change["person"] == "ana"  # the change's author before the pipeline's actor
    assert change["next_step"].startswith("roll back model:ranker 3.3.0 (change chg-7)")
    assert "https://ci.example/run/4411" in change["next_step"]
    assert drift["person"] == "li.wei" and "model card's input schema" in drift["next_step"]
    assert gpu["person"] == "sam.ops"
    assert gpu["next_step"].startswith("drain or scale gpu-node-2")
    assert "/capacity?model=ranker" in gpu["next_step"]
    assert "service user-features" in service["next_step"]
    assert queue["person"] is None and "model_queue_length" in queue["next_step"]
    assert "next_step" not in suspects[0]  # the input is left as it was


def test_a_change_that_is_no_release_is_reverted_as_itself_not_as_a_rollback_of_its_target():
    """The demo said "roll back model:demo_ranker" for a feature launched upstream."""
    upstream = {
        "id": "demo-chg-3",
        "kind": "feature",
        "target": "model:demo_ranker",
        "summary": "query-expansion launched upstream: full queries sent as model input",
        "person": "li.wei",
    }
    (out,) = advise(
        [{"kind": "change", "id": "demo-chg-3", "owner": "algo"}],
        changes=[upstream],
        oncall=ONCALL,
        model="demo_ranker",
    )
    assert out["next_step"] == (
        "revert change demo-chg-3 (feature): query-expansion launched upstream: full queries "
        "sent as model input"
    )


def test_only_the_top_suspects_are_advised():
    many = [_series(f"m{i}", {"host": "h"}) for i in range(TOP + 3)]
    out = advise(many, changes=[], oncall={}, model="")
    assert all("next_step" in s for s in out[:TOP])
    assert not any("next_step" in s for s in out[TOP:])


def test_runbook_is_the_first_link_of_the_sla_document():
    doc = "## Objective\np99 under 50 ms. Runbook: https://wiki.example/ranker-p99 (page 2)"
    assert runbook({"description": doc}) == "https://wiki.example/ranker-p99"
    assert runbook({"description": "no link here"}) is None
    assert runbook({}) is None
