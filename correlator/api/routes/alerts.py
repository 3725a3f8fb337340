"""Alerts: the outbox (what was sent, what failed), channels (secrets masked), silences."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Response

from correlator.alerts.masking import channel_secrets, mask_secret, mask_url
from correlator.alerts.outbox import list_outbox, retry_row
from correlator.alerts.routing import load_config
from correlator.alerts.silences import add_silence, expire_silence, list_silences
from correlator.api.auth import AdminDep, ReaderDep, WriterDep
from correlator.api.deps import EngineDep, SettingsDep
from correlator.api.handlers import field_error, not_found, now, read, who
from correlator.api.handlers import write as write_call
from correlator.api.schemas.alerts import (
    ChannelsOut,
    OutboxRow,
    RetryOut,
    SilenceIn,
    SilenceOut,
)

router = APIRouter(tags=["alerts"])
RowId = Annotated[int, Path(ge=1, le=2**31 - 1, description="row id")]
Status = Literal["pending", "sending", "sent", "failed", "silenced", "stale"]


@router.get(
    "/api/v1/alerts/outbox", response_model=list[OutboxRow], response_model_exclude_unset=True
)
async def outbox(
    engine: EngineDep,
    settings: SettingsDep,
    _writer: WriterDep,
    status: Status | None = None,
    incident: int | None = Query(None, ge=1, le=2**31 - 1),
    limit: int = Query(100, ge=1, le=1000),
    payload: bool = False,
) -> list[dict]:
    """List outbox rows, newest first; failed ones carry their last error (writers only)."""
    try:  # errors stored by an older version were scrubbed less: scrub them again
        channels = list(load_config(settings).channels.values())
    except (OSError, ValueError):
        channels = []
    secrets = [s for c in channels for s in channel_secrets(c.url, c.secret, c.headers)]
    return await read(
        engine,
        list_outbox,
        status=status,
        incident_id=incident,
        limit=limit,
        payload=payload,
        secrets=secrets,
    )


@router.post(
    "/api/v1/alerts/outbox/{row_id}/retry",
    response_model=RetryOut,
    response_model_exclude_unset=True,
)
async def retry(row_id: RowId, engine: EngineDep, _writer: WriterDep) -> dict:
    """Send a failed row again, with fresh attempts."""
    if not await write_call(engine, retry_row, row_id=row_id, now=now()):
        raise not_found(f"failed outbox row {row_id}")
    return {"id": row_id, "status": "pending"}


@router.get(
    "/api/v1/alerts/channels", response_model=ChannelsOut, response_model_exclude_unset=True
)
async def channels(settings: SettingsDep, _reader: ReaderDep) -> dict:
    """List the configured channels and routes; URLs and secrets are masked."""
    try:
        config = load_config(settings)
    except (OSError, ValueError) as exc:
        raise HTTPException(503, f"alert routes unusable: {exc}") from None
    return {
        "channels": [
            {
                "name": c.name,
                "kind": c.kind,
                "url": mask_url(c.url),
                "secret": mask_secret(c.secret),
                "signed": bool(c.secret),
                "rate_per_minute": c.rate_per_minute,
                "headers": {k: mask_secret(v) for k, v in c.headers.items()},
            }
            for c in config.channels.values()
        ],
        "routes": [
            {
                "channels": list(r.channels),
                "models": list(r.models),
                "slas": list(r.slas),
                "teams": list(r.teams),
                "min_severity": r.min_severity,
                "continue": r.continue_,
            }
            for r in config.routes
        ],
        "default": list(config.default),
        "public_url": settings.public_url,
    }


@router.get(
    "/api/v1/alerts/silences", response_model=list[SilenceOut], response_model_exclude_unset=True
)
async def silences(engine: EngineDep, _reader: ReaderDep, expired: bool = False) -> list[dict]:
    """List silences (active and future; expired ones too with ?expired=true)."""
    return await read(engine, list_silences, now=now(), include_expired=expired)


@router.post(
    "/api/v1/alerts/silences",
    status_code=201,
    response_model=SilenceOut,
    response_model_exclude_unset=True,
)
async def create_silence(body: SilenceIn, engine: EngineDep, token: WriterDep) -> dict:
    """Silence matching alerts until ends_at (or for duration_seconds)."""
    t = now()
    start = body.starts_at if body.starts_at is not None else t
    end = body.ends_at if body.ends_at is not None else start + (body.duration_seconds or 0.0)
    if end <= start:
        raise field_error("ends_at", "must be after starts_at")
    return await write_call(
        engine,
        add_silence,
        matchers=body.matchers,
        starts_at=start,
        ends_at=end,
        comment=body.comment,
        author=who(body.author, token),
        now=t,
    )


@router.delete("/api/v1/alerts/silences/{silence_id}", status_code=204)
async def delete_silence(silence_id: RowId, engine: EngineDep, _admin: AdminDep) -> Response:
    """Expire a silence now."""
    if not await write_call(engine, expire_silence, silence_id=silence_id, now=now()):
        raise not_found(f"silence {silence_id}")
    return Response(status_code=204)
