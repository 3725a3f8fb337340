"""The joint troubleshooting chain: input -> model -> output -> downstream, with owners."""

from __future__ import annotations

SEGMENTS = ("input", "model", "output", "downstream")
DEFAULT_OWNER = {"input": "algo", "model": "infra", "output": "algo", "downstream": "infra"}
SUSPECT_SCORE = 0.3

_INPUT = ("model_input_", "feature_service_", "model_fallback_rate")
_OUTPUT = ("model_score", "model_error_rate", "model_timeout_rate")
_DOWNSTREAM = ("model_ctr",)


def segment_of(suspect: dict) -> str:
    """Return the chain segment a suspect (series or change) belongs to."""
    if suspect.get("kind") == "change":
        kind = suspect.get("change_kind") or ""
        target = suspect.get("target") or ""
        if kind == "feature" or target.startswith("service:"):
            return "input"
        return "model"
    metric = suspect.get("metric") or ""
    labels = suspect.get("labels") or {}
    if metric.startswith(_INPUT):
        return "input"
    if metric.startswith(_OUTPUT):
        return "output"
    if metric.startswith(_DOWNSTREAM):
        return "downstream"
    if "service" in labels and not metric.startswith(("model_", "gpu_", "node_", "container_")):
        return "downstream"
    return "model"


def _components(sla: dict, topology: dict) -> dict[str, str]:
    labels = sla.get("labels") or {}
    model = labels.get("model") or sla.get("model") or ""
    service = labels.get("service") or ""
    node = f"model:{model}" if model else f"service:{service}" if service else ""
    edges = [e for e in topology.get("edges", []) if e.get("kind") == "calls"]
    calls = [e["to"] for e in edges if e["from"] == node]
    if not model:  # a service's SLA (a microservice incident): its callers, it, what it calls
        callers = [e["from"] for e in edges if e["to"] == node]
        return {
            "input": ", ".join(callers) or (f"requests to {node}" if node else "requests"),
            "model": node or sla.get("metric", ""),
            "output": f"{node} responses" if node else "responses",
            "downstream": ", ".join(calls),
        }
    kinds = {n["id"]: n.get("kind", "") for n in topology.get("nodes", [])}
    feats = [c for c in calls if "feature" in kinds.get(c, "")]
    others = [c for c in calls if c not in feats]
    return {
        "input": ", ".join(feats) or f"{node} inputs",
        "model": node,
        "output": f"{node} scores",
        "downstream": ", ".join(others),
    }


def build_chain(suspects: list[dict], *, sla: dict, topology: dict) -> list[dict]:
    """Return one entry per segment: component, owning team, status and best evidence."""
    comps = _components(sla, topology)
    out = []
    for seg in SEGMENTS:
        mine = [s for s in suspects if segment_of(s) == seg]
        top = mine[0] if mine else None
        hit = top is not None and float(top.get("score", 0)) >= SUSPECT_SCORE
        out.append(
            {
                "segment": seg,
                "component": comps[seg],
                "owner": (top.get("owner") if hit and top else None) or DEFAULT_OWNER[seg],
                "status": "suspect" if hit else "ok",
                "evidence": top.get("evidence", "") if hit and top else "",
                "suspects": [s.get("rank") for s in mine],
            }
        )
    return out
