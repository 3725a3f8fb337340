"""What a board view is about: its SLAs, the incident in its window, and their series."""

from __future__ import annotations

from dashboard.series_panels import Want

MAX_SLAS = 4
MAX_SUSPECTS = 6


def sla_concerns(sla: dict, model: str | None, services: list[str]) -> bool:
    """Return whether an SLA watches the chosen model and services (all SLAs without a choice)."""
    labels = sla.get("labels") or {}
    if model and labels.get("model") != model:
        return False
    return not services or labels.get("service") in services


def breach_meets(incident: dict, start: float, end: float) -> bool:
    """Return whether an incident's breach (open: to ``end``) meets the window."""
    if incident.get("breach_start") is None:
        return False
    return (
        float(incident["breach_start"]) <= end and float(incident.get("breach_end") or end) >= start
    )


def pick_incident(
    incidents: list[dict], sla_names: set[str], start: float, end: float
) -> dict | None:
    """Return the incident of these SLAs whose breach meets the window: open first, then latest."""
    meeting = [i for i in incidents if i.get("sla") in sla_names and breach_meets(i, start, end)]
    if not meeting:
        return None
    return max(meeting, key=lambda i: (i.get("status") == "open", float(i["breach_start"])))


def focus_slas(
    slas: list[dict], incidents: list[dict], model: str | None, services: list[str], window
) -> list[dict]:
    """Return the SLAs a view is about (at most MAX_SLAS), those breached in the window first."""
    mine = [s for s in slas if s.get("metric") and sla_concerns(s, model, services)]
    breached = {i.get("sla") for i in incidents if breach_meets(i, *window)}
    mine.sort(key=lambda s: (s.get("name") not in breached, str(s.get("name"))))
    return mine[:MAX_SLAS]


def sla_wants(slas: list[dict]) -> list[Want]:
    """Return the series each SLA watches."""
    return [
        Want("sla", str(s["metric"]), dict(s.get("labels") or {}), [str(s.get("name", ""))])
        for s in slas
        if s.get("metric")
    ]


def suspect_wants(incident: dict | None, limit: int = MAX_SUSPECTS) -> list[Want]:
    """Return the series of an incident's best-ranked series suspects (changes are markers)."""
    out: list[Want] = []
    for suspect in (incident or {}).get("suspects") or []:
        if len(out) >= limit:
            break
        metric = suspect.get("metric")
        if suspect.get("kind") != "series" or not isinstance(metric, str) or not metric:
            continue
        labels = {str(k): str(v) for k, v in (suspect.get("labels") or {}).items()}
        out.append(Want("suspect", metric, labels, [f"#{suspect.get('rank', len(out) + 1)}"]))
    return out
