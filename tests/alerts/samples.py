"""A sample incident in the API form, as the incident code hands it to the outbox."""

from __future__ import annotations

T0 = 1_733_131_500.0


def sample_incident(incident_id: int = 3, **extra) -> dict:
    """Return a full incident: scope, three ranked suspects, changes and on-call."""
    suspects = [
        {
            "rank": 1,
            "kind": "series",
            "metric": "model_input_length_bucket",
            "labels": {"instance": "i-3"},
            "score": 0.93,
            "onset": T0 - 240,
            "lead_seconds": 240,
            "owner": "algo",
            "evidence": "long-input share 5% -> 35% from 08:21, 4 min before the breach",
        },
        {
            "rank": 2,
            "kind": "change",
            "id": "chg-17",
            "labels": {},
            "score": 0.71,
            "onset": T0 - 600,
            "lead_seconds": 600,
            "owner": "algo",
            "evidence": "click_rank_v3 3.3.0 canary on i-3, unplanned",
        },
        {
            "rank": 3,
            "kind": "series",
            "metric": "gpu_utilization_percent",
            "labels": {"host": "gpu-node-2"},
            "score": 0.2,
            "onset": T0 - 60,
            "lead_seconds": 60,
            "owner": "infra",
            "evidence": "GPU util flat at 30%",
        },
        {"rank": 4, "kind": "series", "metric": "x", "owner": "infra", "evidence": "fourth"},
    ]
    incident = {
        "id": incident_id,
        "sla": "click_rank_v3 p99 latency",
        "severity": "critical",
        "status": "open",
        "breach_start": T0,
        "breach_end": None,
        "opened_at": T0 + 30,
        "resolved_at": None,
        "scope": {"kind": "local", "labels": {"instance": "i-3", "host": "gpu-node-2"}},
        "suspects": suspects,
        "changes": [
            {
                "id": "chg-17",
                "ts": T0 - 600,
                "kind": "deploy",
                "owner": "algo",
                "summary": "click_rank_v3 3.2.1 -> 3.3.0 canary",
                "unplanned": True,
            }
        ],
        "chain": [],
        "notes": [],
        "oncall": {
            "algo": {"person": "li.wei", "contact": "@li.wei"},
            "infra": {"person": "wang.fang", "contact": "@wang.fang"},
        },
    }
    return incident | extra


SLA = {
    "name": "click_rank_v3 p99 latency",
    "metric": "model_latency_p99_ms",
    "labels": {"model": "click_rank_v3"},
    "aggregate": "max",
    "op": ">",
    "threshold": 50,
    "for_seconds": 120,
    "severity": "critical",
    "model": "click_rank_v3",
}
