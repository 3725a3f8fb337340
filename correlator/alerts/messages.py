"""The channel-neutral alert message built from an incident."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from correlator.alerts.actions import ActionLink
from correlator.analysis.confidence import UNLIKE, UNSEEN_WHY, say
from correlator.analysis.evidence import describe, number, unit_of
from correlator.analysis.render import when
from correlator.records.incident import IncidentRecord
from correlator.vocabulary import DEFAULT_SEVERITY, TEAMS, AlertEvent

BOARD_BEFORE_S = 3600.0
BOARD_AFTER_S = 1800.0


@dataclass(frozen=True, slots=True)
class SuspectLine:
    """One ranked suspect as a message shows it."""

    rank: int
    what: str
    evidence: str
    owner: str
    lead_seconds: float | None
    score: float | None
    person: str | None = None  # who to ask: the change's author, the owning team's on-call
    next_step: str | None = None
    words: str = ""  # the suspect said for a sentence: "error log lines on pay"


@dataclass(frozen=True, slots=True)
class ChangeLine:
    """One change in the breach window."""

    ts: float | None
    kind: str
    summary: str
    owner: str
    unplanned: bool


@dataclass(frozen=True, slots=True)
class Message:
    """What every channel says about one incident event."""

    event: AlertEvent
    incident_id: int
    sla: str
    severity: str
    model: str
    team: str
    title: str
    condition: str
    value_line: str
    since: float
    scope: str
    suspects: list[SuspectLine]
    changes: list[ChangeLine]
    oncall: dict[str, str]
    board_url: str
    incident_url: str
    thread_key: str
    duration_seconds: float | None = None
    resolved_at: float | None = None
    labels: dict[str, str] = field(default_factory=dict)
    confidence: float | None = None  # the chance that the top suspect is a root cause
    # Signed actions on the incident (none once resolved, or without an action_secret), and
    # whether Slack answers its buttons itself (a signing secret set) instead of opening them.
    actions: tuple[ActionLink, ...] = ()
    interactive: bool = False

    @property
    def top_suspect(self) -> str:
        """Return the top suspect in a few words ('' when there is none)."""
        return self.suspects[0].what if self.suspects else ""


def _trust(p: float, said: str | None, top: str) -> str:
    """Say in a few words how far to trust the top suspect: ``likely (83%): what``.

    ``said`` is the incident's own reading of ``p`` (else it is read here).
    """
    said = said or say(p)
    if said == "likely":
        return f"likely ({p:.0%}): {top}"
    if said == "possible":
        return f"possibly ({p:.0%}): {top}"
    if said == UNLIKE:
        return f"unsure ({UNSEEN_WHY}): compare the top 3"
    return f"unsure ({p:.0%}): compare the top 3"


def suspect_key(suspect: dict) -> str:
    """Return a stable identity of a suspect (kind, metric or id, labels)."""
    labels = suspect.get("labels") or {}
    tag = ",".join(f"{k}={labels[k]}" for k in sorted(labels))
    return f"{suspect.get('kind', '')}:{suspect.get('metric') or suspect.get('id') or ''}{{{tag}}}"


def _what(suspect: dict) -> str:
    if suspect.get("kind") == "change":
        return f"change {suspect.get('id') or ''}".strip()
    labels = suspect.get("labels") or {}
    tag = ",".join(f"{k}={v}" for k, v in sorted(labels.items()) if k != "__name__")
    name = suspect.get("metric") or suspect.get("id") or "?"
    return f"{name}{{{tag}}}" if tag else str(name)


def _words(suspect: dict) -> str:
    """Return a suspect in words: the signal and where, or the change and what it changed."""
    if suspect.get("kind") == "change":
        target = suspect.get("target")
        return f"change {suspect.get('id') or ''}" + (f" on {target}" if target else "")
    return describe(str(suspect.get("metric") or "?"), suspect.get("labels") or {})


def _one_line(text, limit: int) -> str:
    """Return text on one line (runs of white space as one space), cut to ``limit``."""
    return " ".join(str(text or "").split())[:limit]


def _suspects(incident: IncidentRecord) -> list[SuspectLine]:
    out = []
    for i, s in enumerate((incident.get("suspects") or [])[:3]):
        out.append(
            SuspectLine(
                rank=int(s.get("rank") or i + 1),
                what=_what(s),
                evidence=_one_line(s.get("evidence"), 300),
                owner=str(s.get("owner") or "?"),
                lead_seconds=s.get("lead_seconds"),
                score=s.get("score"),
                person=str(s["person"])[:200] if s.get("person") else None,
                next_step=_one_line(s.get("next_step"), 300) or None,
                words=_one_line(_words(s), 200),
            )
        )
    return out


def _changes(incident: IncidentRecord) -> list[ChangeLine]:
    rows = [c for c in incident.get("changes") or [] if c.get("ts") is not None]
    rows.sort(key=lambda c: c["ts"], reverse=True)
    return [
        ChangeLine(
            ts=c.get("ts"),
            kind=str(c.get("kind") or "change"),
            summary=str(c.get("summary") or c.get("target") or c.get("id") or "")[:200],
            owner=str(c.get("owner") or "?"),
            unplanned=bool(c.get("unplanned")),
        )
        for c in rows[:5]
    ]


def _scope(incident: IncidentRecord) -> tuple[str, dict]:
    scope = incident.get("scope") or {}
    if not isinstance(scope, dict) or not scope.get("kind"):
        return "scope unknown", {}
    labels = {str(k): str(v) for k, v in (scope.get("labels") or {}).items()}
    where = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return (f"{scope['kind']} ({where})" if where else str(scope["kind"])), labels


def _oncall(incident: IncidentRecord) -> dict[str, str]:
    out = {}
    for team in TEAMS:
        who = (incident.get("oncall") or {}).get(team)
        if isinstance(who, dict) and who.get("person"):
            contact = who.get("contact") or ""
            out[team] = f"{who['person']} ({contact})" if contact else str(who["person"])
        else:
            out[team] = "nobody on call"
    return out


def _number(value: float) -> str:
    return f"{value:.4g}"


def board_url(public_url: str, *, model: str, start: float, end: float) -> str:
    """Return the deep link to the joint board around a time range."""
    query = urlencode({"model": model, "from": round(start), "to": round(end)})
    return f"{public_url.rstrip('/')}/board?{query}"


def incident_url(public_url: str, incident_id: int) -> str:
    """Return the deep link to an incident."""
    return f"{public_url.rstrip('/')}/incidents/{quote(str(incident_id))}"


def build_message(
    incident: IncidentRecord,
    event: AlertEvent,
    *,
    sla: dict | None,
    public_url: str,
    value: float | None = None,
    now: float,
    actions: tuple[ActionLink, ...] = (),
    interactive: bool = False,
) -> Message:
    """Return the message for an incident event; ``sla`` and ``value`` fill the condition."""
    sla = sla or {}
    model = str(sla.get("model") or (sla.get("labels") or {}).get("model") or "")
    metric = sla.get("metric") or "?"
    op, threshold = sla.get("op"), sla.get("threshold")
    condition = (
        f"{metric} {op} {_number(float(threshold))}"
        if op and threshold is not None
        else f"SLA {incident['sla']}"
    )
    if sla.get("for_seconds"):
        condition += f" for {round(float(sla['for_seconds']))} s"
    scope, scope_labels = _scope(incident)
    suspects = _suspects(incident)
    since = float(incident.get("breach_start") or now)
    resolved_at = incident.get("resolved_at")
    end = float(incident.get("breach_end") or resolved_at or now)
    unit = unit_of(str(metric))
    limit = number(float(threshold or 0), unit)
    if value is None:
        value_line = f"breaching {condition}"
    elif event == "resolved":
        value_line = f"now {number(value, unit)} (threshold {limit})"
    else:
        value_line = f"{number(value, unit)} vs threshold {limit}"
    severity = str(incident.get("severity") or sla.get("severity") or DEFAULT_SEVERITY)
    team = suspects[0].owner if suspects and suspects[0].owner in TEAMS else ""
    verb = {
        "opened": "SLA breach",
        "updated": "Top suspect changed",
        "acknowledged": f"Acknowledged by {incident.get('acknowledged_by') or 'someone'}",
        "assigned": f"Assigned to {incident.get('assignee') or 'someone'}",
        "escalated": (
            f"Escalated to {incident.get('assignee') or 'nobody further on call'} "
            f"(level {incident.get('escalations') or 1})"
        ),
        "snoozed": f"Snoozed until {when(float(incident.get('snoozed_until') or now))}",
        "resolved": "Resolved",
    }
    title = f"[{severity.upper()}] {verb[event]}: {incident['sla']}"
    p = incident.get("confidence")
    p = float(p) if isinstance(p, int | float) and suspects else None
    if p is not None and event != "resolved":
        said = incident.get("confidence_says")
        title += f" | {_trust(p, said, suspects[0].words or suspects[0].what)}"
    labels = {"sla": str(incident["sla"]), "model": model, "severity": severity, "team": team}
    labels |= {k: v for k, v in scope_labels.items() if k not in labels}
    return Message(
        event=event,
        incident_id=int(incident["id"]),
        sla=str(incident["sla"]),
        severity=severity,
        model=model,
        team=team,
        title=title,
        condition=condition,
        value_line=value_line,
        since=since,
        scope=scope,
        suspects=suspects,
        changes=_changes(incident),
        oncall=_oncall(incident),
        board_url=board_url(
            public_url, model=model, start=since - BOARD_BEFORE_S, end=end + BOARD_AFTER_S
        ),
        incident_url=incident_url(public_url, int(incident["id"])),
        thread_key=f"causeline-incident-{incident['id']}",
        # The breach's own length, as the page and the review say it; else until resolved.
        duration_seconds=(end - since) if event == "resolved" and resolved_at else None,
        resolved_at=float(resolved_at) if resolved_at else None,
        labels=labels,
        confidence=p,
        actions=actions if event != "resolved" else (),
        interactive=interactive,
    )
