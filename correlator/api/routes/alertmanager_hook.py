"""Alertmanager's webhook into causeline: outside alerts onto the timeline and incidents."""

from __future__ import annotations

from fastapi import APIRouter

from correlator.alerts.inbound import take_webhook
from correlator.api.auth import WriterDep
from correlator.api.deps import EngineDep, SettingsDep, SourceDep
from correlator.api.handlers import now, write
from correlator.api.schemas.alerts import WebhookIn, WebhookOut

router = APIRouter(tags=["alerts"])


@router.post(
    "/api/v1/hooks/alertmanager", response_model=WebhookOut, response_model_exclude_unset=True
)
async def alertmanager_hook(
    body: WebhookIn, engine: EngineDep, settings: SettingsDep, source: SourceDep, _w: WriterDep
) -> dict:
    """Store each alert as a timeline event and attach new ones to open incidents."""
    return await write(
        engine,
        take_webhook,
        payload=body.model_dump(),
        now=now(),
        open_incidents=settings.alert_inbound_opens_incidents,
        settings=settings,
        source=source,
    )
