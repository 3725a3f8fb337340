"""The incident record: what the store hands the API, the alerts and the CLI for one incident.

The store builds it (``correlator/store/incidents.py``) from the row and its snapshot (the
analysis at opening, reranked since); the API returns it as JSON as it is.
"""

from __future__ import annotations

from typing import Any, TypedDict


class NoteRecord(TypedDict):
    """A note on an incident: who wrote what, when."""

    id: int
    ts: float
    author: str
    team: str | None
    text: str


class IncidentSummaryRecord(TypedDict):
    """An incident in a list: its SLA, state and people, and its top suspect."""

    id: int
    sla: str
    status: str  # "open" or "resolved"
    severity: str
    breach_start: float
    breach_end: float | None
    opened_at: float
    acknowledged_at: float | None
    acknowledged_by: str | None
    assignee: str | None
    escalations: int
    escalated_at: float | None
    snoozed_until: float | None
    resolved_at: float | None
    top_suspect: dict[str, Any] | None


class IncidentRecord(IncidentSummaryRecord):
    """A whole incident: the summary, the snapshot's ranked suspects and changes, the notes."""

    resolved_by: str | None
    opened_by: str | None
    reranked_at: float | None
    headline: str | None
    scope: dict[str, Any] | None
    confidence: float | None
    confidence_says: str | None
    suspects: list[dict[str, Any]]
    changes: list[dict[str, Any]]
    chain: list[dict[str, Any]]
    oncall: dict[str, Any]
    analysis_error: str | None
    runbook: str | None
    imported: dict[str, Any] | None
    notes: list[NoteRecord]
