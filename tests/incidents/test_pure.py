"""Pure pieces of incident handling: live SLA state, capacity arithmetic, chain, cards, review."""

from __future__ import annotations

import numpy as np

from correlator.bundle import Series
from correlator.incidents.capacity import PlanInput, plan, recommended_replicas
from correlator.incidents.cards import card_errors
from correlator.incidents.chain import build_chain, segment_of
from correlator.incidents.live import sla_state
from correlator.incidents.review import render_review
from tests.api.test_models import CARD

SLA = {"name": "s", "metric": "lat", "labels": {}, "op": ">", "threshold": 50, "for_seconds": 60}


def _series(values, instance="i-0"):
    ts = 1000.0 + 15 * np.arange(len(values))
    return Series("lat", {"instance": instance}, ts, np.array(values, dtype=float))


def test_sla_state_needs_the_for_duration_and_sees_recovery():
    assert not sla_state([_series([10] * 10 + [90] * 3)], SLA).breaching  # 30 s only
    state = sla_state([_series([10] * 10 + [90] * 6)], SLA)
    # 60 s after the run began (grid points sit half a step before the samples)
    assert state.breaching and abs(state.start - (1000 + 15 * 14)) <= 7.5
    back = sla_state([_series([10] * 10 + [90] * 6 + [10, 10])], SLA)
    assert not back.breaching and abs(back.ok_since - (1000 + 15 * 16)) <= 7.5
    # max over instances: one bad instance is enough, and single missing points are bridged
    mixed = sla_state([_series([10] * 16), _series([10] * 10 + [90, np.nan] * 3, "i-1")], SLA)
    assert mixed.breaching and mixed.last_value == 90
    assert not sla_state([], SLA).known


def test_capacity_arithmetic():
    got = plan(PlanInput(30, 12, 40, 400, 0.2, "T4"))
    assert (got["replicas"], got["replicas_with_redundancy"]) == (10, 12)
    assert plan(PlanInput(30, 12, 40, 401, 0.2))["replicas"] == 11
    assert plan(PlanInput(30, 12, 40, 400, 0.0))["replicas_with_redundancy"] == 10
    assert recommended_replicas(queue_length=600, arrival_qps=70, service_rate=35) == 3
    assert recommended_replicas(queue_length=0, arrival_qps=0, service_rate=35, min_replicas=2) == 2
    assert recommended_replicas(queue_length=5, arrival_qps=5, service_rate=0) == 1


def test_card_errors_name_each_part():
    assert card_errors(CARD) == []
    assert [f for f, _ in card_errors({})] == list(CARD)
    bad = card_errors(CARD | {"known_risks": "none", "feature_dependencies": [{"x": 1}]})
    assert {f for f, _ in bad} == {"known_risks", "feature_dependencies"}


def test_chain_puts_suspects_on_their_segment():
    suspects = [
        {
            "rank": 1,
            "kind": "series",
            "metric": "model_input_length_bucket",
            "score": 0.9,
            "owner": "algo",
            "evidence": "inputs doubled",
        },
        {
            "rank": 2,
            "kind": "change",
            "change_kind": "image",
            "score": 0.5,
            "owner": "infra",
            "evidence": "image update",
        },
        {"rank": 3, "kind": "series", "metric": "model_score_bucket", "score": 0.1},
    ]
    topo = {
        "nodes": [
            {"id": "service:f", "kind": "feature_service"},
            {"id": "service:d", "kind": "rpc"},
        ],
        "edges": [
            {"from": "model:m", "to": "service:f", "kind": "calls"},
            {"from": "model:m", "to": "service:d", "kind": "calls"},
        ],
    }
    chain = build_chain(suspects, sla={"labels": {"model": "m"}}, topology=topo)
    assert [c["status"] for c in chain] == ["suspect", "suspect", "ok", "ok"]
    assert chain[0]["component"] == "service:f" and chain[3]["component"] == "service:d"
    assert chain[1]["owner"] == "infra" and chain[2]["suspects"] == [3]
    assert segment_of({"kind": "series", "metric": "model_ctr"}) == "downstream"


def test_review_of_an_incident_without_suspects():
    text = render_review(
        {"id": 1, "sla": "s", "status": "open", "breach_start": 1733131500, "suspects": []}
    )
    assert "No suspect was ranked" in text and "## Action items" in text


def test_review_ends_each_suspects_evidence_before_its_next_step():
    suspect = {
        "rank": 1,
        "kind": "series",
        "metric": "lat",
        "labels": {"service": "a"},
        "score": 0.5,
        "owner": "infra",
        "lead_seconds": 60,
        "evidence": "lat on a 1 -> 2 (+9 sigma) from 03:44, 1 min before the breach",
        "next_step": "ask the owner of service a.",
    }
    incident = {"id": 1, "sla": "s", "status": "open", "breach_start": 1733131500}
    text = render_review(incident | {"suspects": [suspect]})
    assert "1 min before the breach. Next step: ask the owner of service a." in text
    assert "lat on a 1 -> 2 (+9 sigma)" in text and "&gt;" not in text  # readable as text
    no_step = render_review(incident | {"suspects": [suspect | {"next_step": None}]})
    assert "1 min before the breach.\n" in no_step


def test_review_names_a_chain_segment_without_a_component_in_words():
    chain = [{"segment": "downstream", "component": None, "owner": "infra", "status": "ok"}]
    incident = {"id": 1, "sla": "s", "status": "open", "breach_start": 1733131500}
    text = render_review(incident | {"suspects": [], "chain": chain})
    assert "- downstream: none named - owner infra, ok" in text


def test_recovery_note_reads_in_plain_words():
    from correlator.incidents.evaluator import recovered_note

    sla = {"metric": "model_latency_p95_ms", "op": ">", "threshold": 50.0, "for_seconds": 120.0}
    assert recovered_note(sla, 41.234) == (
        "SLA recovered: model_latency_p95_ms is back at or below 50 ms "
        "(last value 41.23 ms; SLA: above 50 ms for 120 s is a breach)"
    )
    low = {"metric": "model_requests_per_second", "op": "<", "threshold": 10, "for_seconds": 0}
    assert recovered_note(low) == (
        "SLA recovered: model_requests_per_second is back at or above 10 "
        "(SLA: below 10 is a breach)"
    )


def test_the_demo_breach_and_the_days_after_fall_in_one_on_call_shift():
    """The incident named chen.yu while the Models and On-call pages named li.wei."""
    from causeline.demo import MODEL, breach_window, demo_rotations
    from correlator.store.oncall import pick_oncall

    end = 1_733_131_500.0
    rotations = [r | {"name": r["name"]} for r in demo_rotations(MODEL, end)]
    for team in ("algo", "infra"):
        at_breach = pick_oncall(rotations, [], team=team, model=MODEL, at=breach_window(end)[0])
        for later in (end, end + 86400, end + 3 * 86400):
            now = pick_oncall(rotations, [], team=team, model=MODEL, at=later)
            assert now["person"] == at_breach["person"], (team, later)


def test_a_service_incident_chain_names_its_callers_the_service_and_what_it_calls():
    """A microservice incident's chain read "input: inputs, model: latency_avg, output: outputs"."""
    from correlator.incidents.chain import build_chain

    topology = {
        "nodes": [{"id": f"service:{n}", "kind": "service"} for n in ("web", "PetSite", "db")],
        "edges": [
            {"from": "service:web", "to": "service:PetSite", "kind": "calls"},
            {"from": "service:PetSite", "to": "service:db", "kind": "calls"},
        ],
    }
    sla = {"metric": "latency_avg", "labels": {"service": "PetSite"}}
    chain = {c["segment"]: c["component"] for c in build_chain([], sla=sla, topology=topology)}
    assert chain == {
        "input": "service:web",
        "model": "service:PetSite",
        "output": "service:PetSite responses",
        "downstream": "service:db",
    }
