"""Incidents: list, inspect, annotate, re-rank, resolve, review; evaluate and analyze now."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import PlainTextResponse
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from correlator.analysis import AnalysisError, SlaMatchError
from correlator.api.auth import ReaderDep, WriterDep
from correlator.api.deps import EngineDep, HolderDep, SettingsDep, SourceDep
from correlator.api.handlers import field_error, not_found, now, read, who, write
from correlator.api.schemas.incidents import (
    ActionIn,
    AnalysisOut,
    AnalyzeIn,
    AssignIn,
    EvaluationOut,
    IncidentOut,
    IncidentSummary,
    NoteIn,
    NoteOut,
    SnoozeIn,
)
from correlator.incidents.announce import (
    Act,
    acknowledge_and_announce,
    assign_and_announce,
    escalate_and_announce,
    resolve_by_hand,
    snapshot_and_announce,
    snooze_and_announce,
)
from correlator.incidents.evaluator import evaluate_once
from correlator.incidents.review import render_review
from correlator.incidents.snapshot import analyze_stored, build_snapshot
from correlator.limits import MAX_TS
from correlator.promsource import PromSourceError
from correlator.records.incident import IncidentRecord
from correlator.settings import ServiceSettings
from correlator.store.incidents import (
    add_note,
    get_incident,
    list_incidents,
)
from correlator.store.windows import MetricSource

router = APIRouter(tags=["incidents"])
IncidentId = int


def _id(incident_id: int) -> int:
    if not 0 < incident_id < 2**31:
        raise not_found(f"incident {incident_id}")
    return incident_id


async def _get(engine: Engine, incident_id: int) -> IncidentRecord:
    got = await read(engine, get_incident, incident_id=_id(incident_id))
    if got is None:
        raise not_found(f"incident {incident_id}")
    return got


@router.get(
    "/api/v1/incidents", response_model=list[IncidentSummary], response_model_exclude_unset=True
)
async def incidents(
    engine: EngineDep, _reader: ReaderDep, status: Literal["open", "resolved"] | None = None
) -> list[dict]:
    """Return incident summaries, open ones first, newest first."""
    return await read(engine, list_incidents, status=status)


@router.get(
    "/api/v1/incidents/{incident_id}", response_model=IncidentOut, response_model_exclude_unset=True
)
async def incident(incident_id: int, engine: EngineDep, _reader: ReaderDep) -> IncidentRecord:
    """Return an incident: breach, scope, suspects, changes, chain, notes, on-call."""
    return await _get(engine, incident_id)


@router.post(
    "/api/v1/incidents/{incident_id}/notes",
    status_code=201,
    response_model=NoteOut,
    response_model_exclude_unset=True,
)
async def note(incident_id: int, body: NoteIn, engine: EngineDep, token: WriterDep) -> dict:
    """Add a timestamped note to an incident."""
    got = await write(
        engine,
        add_note,
        incident_id=_id(incident_id),
        author=who(body.author, token),
        team=body.team,
        text=body.text,
        now=now(),
    )
    if got is None:
        raise not_found(f"incident {incident_id}")
    return got


@router.post(
    "/api/v1/incidents/{incident_id}/rerank",
    response_model=IncidentOut,
    response_model_exclude_unset=True,
)
async def rerank(
    incident_id: int,
    engine: EngineDep,
    settings: SettingsDep,
    source: SourceDep,
    token: WriterDep,
    body: ActionIn | None = None,
) -> IncidentRecord:
    """Recompute the suspects snapshot from the data stored now."""
    inc = await _get(engine, incident_id)
    t = now()
    snap = await run_in_threadpool(
        build_snapshot,
        engine,
        sla_name=inc["sla"],
        breach_start=inc["breach_start"],
        now=t,
        source=source,
    )
    await write(
        engine,
        snapshot_and_announce,
        incident_id=inc["id"],
        snapshot=snap,
        now=t,
        settings=settings,
        event="updated",
        source=source,
    )
    return await _get(engine, incident_id)


@dataclass(frozen=True, slots=True)
class _Actor:
    """What an incident action needs besides its incident: the store, settings and source."""

    engine: Engine
    settings: ServiceSettings
    source: MetricSource | None


def _actor(engine: EngineDep, settings: SettingsDep, source: SourceDep) -> _Actor:
    return _Actor(engine, settings, source)


ActorDep = Annotated[_Actor, Depends(_actor)]


async def _act(actor: _Actor, incident_id: int, action, by: str, text: str | None, **extra):
    """Run one incident action by ``by``; 409 with why when it cannot be done."""
    await _get(actor.engine, incident_id)
    act = Act(incident_id, now(), by, actor.settings, actor.source, text)
    refused = await write(actor.engine, action, act=act, **extra)
    if refused:
        raise HTTPException(409, refused)
    return await _get(actor.engine, incident_id)


@router.post(
    "/api/v1/incidents/{incident_id}/resolve",
    response_model=IncidentOut,
    response_model_exclude_unset=True,
)
async def resolve(
    incident_id: int, actor: ActorDep, token: WriterDep, body: ActionIn | None = None
) -> dict:
    """Resolve an open incident by hand; 409 when it is already resolved."""
    body = body or ActionIn.model_validate({})
    return await _act(actor, incident_id, resolve_by_hand, who(body.author, token), body.text)


@router.post(
    "/api/v1/incidents/{incident_id}/acknowledge",
    response_model=IncidentOut,
    response_model_exclude_unset=True,
)
async def acknowledge(
    incident_id: int, actor: ActorDep, token: WriterDep, body: ActionIn | None = None
) -> dict:
    """Take an open incident: who and when on it, its timeline and its chat; 409 if taken."""
    body = body or ActionIn.model_validate({})
    by = who(body.author, token)
    return await _act(actor, incident_id, acknowledge_and_announce, by, body.text)


@router.post(
    "/api/v1/incidents/{incident_id}/escalate",
    response_model=IncidentOut,
    response_model_exclude_unset=True,
)
async def escalate(
    incident_id: int, actor: ActorDep, token: WriterDep, body: ActionIn | None = None
) -> dict:
    """Escalate an open incident to the next on call of its owning team; 409 if resolved."""
    body = body or ActionIn.model_validate({})
    by = who(body.author, token)
    return await _act(actor, incident_id, escalate_and_announce, by, body.text)


@router.post(
    "/api/v1/incidents/{incident_id}/assign",
    response_model=IncidentOut,
    response_model_exclude_unset=True,
)
async def assign(incident_id: int, body: AssignIn, actor: ActorDep, token: WriterDep) -> dict:
    """Give an open incident to a person; 409 if resolved."""
    by = who(body.author, token)
    return await _act(actor, incident_id, assign_and_announce, by, body.text, person=body.person)


@router.post(
    "/api/v1/incidents/{incident_id}/snooze",
    response_model=IncidentOut,
    response_model_exclude_unset=True,
)
async def snooze(
    incident_id: int, actor: ActorDep, token: WriterDep, body: SnoozeIn | None = None
) -> dict:
    """Hold an open incident's escalation and repeated messages for a while; 409 if resolved."""
    body = body or SnoozeIn.model_validate({})
    by = who(body.author, token)
    return await _act(actor, incident_id, snooze_and_announce, by, body.text, minutes=body.minutes)


@router.get("/api/v1/incidents/{incident_id}/review", response_class=PlainTextResponse)
async def review(incident_id: int, engine: EngineDep, _reader: ReaderDep) -> PlainTextResponse:
    """Return the post-incident review in Markdown."""
    inc = await _get(engine, incident_id)
    return PlainTextResponse(render_review(inc), media_type="text/markdown; charset=utf-8")


@router.post("/api/v1/evaluate", response_model=EvaluationOut, response_model_exclude_unset=True)
async def evaluate(
    engine: EngineDep,
    settings: SettingsDep,
    holder: HolderDep,
    source: SourceDep,
    _writer: WriterDep,
    at: float | None = Query(None, ge=0, le=MAX_TS, description="evaluate as of this time"),
) -> dict:
    """Run one SLA evaluation pass now (under the evaluator lease)."""
    return await run_in_threadpool(
        evaluate_once,
        engine,
        holder=holder,
        now=at,
        lease_seconds=settings.lease_seconds,
        settings=settings,
        source=source,
    )


@router.post("/api/v1/analyze", response_model=AnalysisOut, response_model_exclude_unset=True)
async def analyze(
    body: AnalyzeIn, engine: EngineDep, source: SourceDep, _reader: ReaderDep
) -> dict:
    """Rank suspects of an SLA breach from stored data and the metric source (FORMAT.md)."""
    try:
        got = await run_in_threadpool(analyze_stored, engine, body.sla, body.at, source=source)
    except (AnalysisError, SlaMatchError, ValueError) as exc:
        raise field_error("sla", str(exc)) from exc
    except PromSourceError as exc:
        raise HTTPException(502, {"field": "sla", "reason": str(exc)}) from exc
    if got is None:
        raise not_found(f"SLA {body.sla}")
    return got
