"""Incident bodies: notes, actions, suspects, incidents, an evaluation pass and an analysis."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from correlator.api.handlers import Author, Body
from correlator.api.schemas.base import Labels, Number, Ordered, Out
from correlator.limits import MAX_NAME, Seconds

MAX_SNOOZE_MINUTES = 7 * 24 * 60  # a week: longer is a silence, not a snooze


class NoteIn(Body):
    """A timestamped note from one team."""

    text: str = Field(min_length=1, max_length=20_000)
    team: Literal["algo", "infra", "other"] = "other"
    author: Author = None


class NoteOut(Out):
    """A stored note."""

    id: int
    ts: float = Field(description="unix seconds")
    author: str
    team: str
    text: str


class ActionIn(Body):
    """Who does it, and optionally why (written as a note)."""

    author: Author = None
    text: str | None = Field(None, max_length=20_000)


class AssignIn(ActionIn):
    """Whom to give the incident to, who does it, and optionally why."""

    person: str = Field(min_length=1, max_length=MAX_NAME)


class SnoozeIn(ActionIn):
    """How long to hold the incident's escalation and messages, who does it, and why."""

    minutes: float = Field(60, gt=0, le=MAX_SNOOZE_MINUTES)


class AnalyzeIn(Body):
    """Which SLA to analyze, and at which breach time (default: found in the newest data)."""

    sla: str = Field(min_length=1, max_length=200)
    at: Seconds | None = None


class Suspect(Ordered):
    """A ranked suspect (FORMAT.md): a series or a change, its score, onset and evidence."""

    # Kept as the analysis wrote it (most fields optional); on an incident the top ones also
    # carry person and next_step, and a grouped one lists its members.

    rank: int
    kind: str = Field(examples=["series", "change"])
    metric: str | None = None
    labels: Labels | None = None
    id: str | None = Field(None, description="a change's id")
    change_kind: str | None = None
    target: str | None = None
    node: str | None = Field(None, description="the topology node it belongs to")
    score: Number | None = Field(None, description="in [0, 1]")
    onset: Number | None = Field(None, description="unix seconds")
    lead_seconds: Number | None = Field(None, description="breach_start - onset")
    owner: str | None = None
    evidence: str | None = None
    z: Number | None = None
    drift: dict[str, Any] | None = None
    members: list[dict[str, Any]] | None = Field(None, description="the series it stands for")
    person: str | None = Field(None, description="who to ask (top suspects of an incident)")
    next_step: str | None = Field(None, description="what to check (top suspects of an incident)")


class ChainStep(Out):
    """A segment of the serving chain (input, features, model, host...) and its suspects."""

    segment: str | None = None
    component: str | None = None
    owner: str | None = None
    status: str | None = Field(None, examples=["suspect", "ok"])
    evidence: str | None = None
    suspects: list[Any] | None = Field(None, description="ranks of its suspects")


class IncidentSummary(Out):
    """An incident in the list: its SLA breach, status and top suspect."""

    id: int
    sla: str
    status: str = Field(examples=["open", "resolved"])
    severity: str
    breach_start: Number = Field(description="unix seconds")
    breach_end: Number | None = Field(description="unix seconds; null while it lasts")
    opened_at: Number = Field(description="unix seconds")
    acknowledged_at: Number | None = Field(None, description="unix seconds; null until then")
    acknowledged_by: str | None = Field(None, description="who took it")
    assignee: str | None = Field(None, description="whom it is with: assigned, taken, escalated")
    escalations: int = Field(0, description="how many times it was escalated")
    escalated_at: Number | None = Field(None, description="unix seconds of the last escalation")
    snoozed_until: Number | None = Field(
        None, description="unix seconds: until then no escalation and its messages are held"
    )
    resolved_at: Number | None = Field(description="unix seconds")
    top_suspect: Suspect | None


class ImportedWindow(Out):
    """Where an imported incident's data comes from, and the window it holds."""

    source: str = Field(description="the bundle it was imported from")
    start: Number = Field(description="unix seconds")
    end: Number = Field(description="unix seconds")


class IncidentOut(IncidentSummary):
    """An incident: breach, scope, suspects, changes, chain, on-call and notes."""

    resolved_by: str | None
    opened_by: str
    reranked_at: Number | None = Field(description="unix seconds of the suspects snapshot")
    headline: str | None = Field(
        default=None,
        description="the answer in one sentence: top suspect, where, when, owner, next step",
    )
    scope: dict[str, Any] | None = Field(description="local (its labels) or global")
    confidence: float | None = Field(
        default=None, description="the chance (0-1) that the top suspect is a root cause"
    )
    confidence_says: str | None = Field(
        default=None,
        description="likely, possible, unsure: compare the top 3, or, where no past incident"
        " had as many series, unsure: no past incident had this many series; compare the top 3",
    )
    suspects: list[Suspect]
    changes: list[dict[str, Any]] = Field(description="changes before the breach, as then")
    chain: list[ChainStep]
    oncall: dict[str, Any] = Field(description="algo and infra: who was on call, or null")
    analysis_error: str | None
    runbook: str | None = Field(description="the first link of the SLA's document")
    imported: ImportedWindow | None = Field(
        default=None, description="set for an incident opened from imported (past) data"
    )
    notes: list[NoteOut]


class EvaluationOut(Out):
    """What one evaluation pass did: incidents opened and resolved, each SLA's state."""

    held_lease: bool
    holder: str
    at: Number = Field(description="unix seconds evaluated")
    opened: list[int] = Field(description="ids of incidents opened")
    resolved: list[int] = Field(description="ids of incidents resolved")
    escalated: list[int] = Field(
        default_factory=list, description="ids of unacknowledged incidents escalated"
    )
    checked: int = Field(description="SLAs checked")
    slas: dict[str, str] = Field(description="SLA name: its state in words")
    reason: str | None = Field(None, description="why nothing changed")
    seconds: Number | None = Field(None, description="how long the pass took (lease held)")


class SeriesRead(Out):
    """How many series a store past the bound let the analysis read, of those in scope."""

    read: int
    in_scope: int = Field(description="series the SLA's scope names")
    max_series: int
    capped: bool = Field(description="true when series in scope were left out")
    left_out: list[str] = Field(
        default_factory=list, description="metrics of the source not read, and why"
    )


class AnalysisWindow(Out):
    """The stored window the analysis read, and how the breach time was found."""

    start: Number
    end: Number
    recording: str | None = Field(description="the imported incident the window is from")
    baseline: bool
    breach: str | None = Field(None, examples=["given", "threshold"])
    series_read: SeriesRead | None = Field(
        None, description="present when the store held more series than one analysis reads"
    )


class AnalysisOut(Out):
    """The analysis of an SLA breach (FORMAT.md): breach, scope and ranked suspects."""

    sla: str | None
    breach_start: Number | None = Field(description="unix seconds")
    breach_end: Number | None = Field(description="unix seconds")
    breach_given: bool
    grid_step: Number = Field(description="seconds between aligned points")
    suspects: list[Suspect]
    note: str | None = Field(None, description="why there are no suspects")
    scope: dict[str, Any] | None = None
    confidence: float | None = Field(
        None, description="the chance (0-1) that the top suspect is a root cause"
    )
    confidence_unlike: bool | None = Field(
        None, description="no past incident had this many series: the chance is not known"
    )
    timings: dict[str, Number] | None = None
    window: AnalysisWindow | None = None
