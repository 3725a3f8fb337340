"""Alertmanager's webhook into causeline: outside alerts onto the timeline and incidents."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from correlator.alerts.inbound import parse_time, take_webhook
from correlator.api.auth import WriterDep
from correlator.api.deps import EngineDep, SettingsDep, SourceDep
from correlator.api.process_io import now, write

router = APIRouter(tags=["alerts"])


class WebhookAlert(BaseModel):
    """One alert in an Alertmanager webhook notification."""

    model_config = ConfigDict(extra="allow")
    status: str = "firing"
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: str | None = None  # noqa: N815 (Alertmanager's field names)
    endsAt: str | None = None  # noqa: N815
    fingerprint: str | None = Field(default=None, max_length=200)

    @field_validator("startsAt", "endsAt")
    @classmethod
    def _rfc3339(cls, value: str | None) -> str | None:
        try:
            stamp = parse_time(value)
        except (ValueError, OverflowError, OSError) as exc:
            raise ValueError(f"not an RFC 3339 time: {value[:40]!r}") from exc
        if stamp is not None and not 0 <= stamp < 1e11:
            raise ValueError(f"time out of range: {value[:40]!r}")
        return value

    @model_validator(mode="after")
    def _no_nul(self):
        texts = [self.status, self.fingerprint or "", *self.labels, *self.labels.values()]
        texts += [*self.annotations, *self.annotations.values()]
        if any("\x00" in t for t in texts):
            raise ValueError("strings must not contain NUL characters")
        return self


class WebhookIn(BaseModel):
    """Alertmanager's webhook body (version 4)."""

    model_config = ConfigDict(extra="allow")
    version: str = "4"
    status: str = "firing"
    receiver: str = ""
    alerts: list[WebhookAlert] = Field(default_factory=list, max_length=10_000)


@router.post("/api/v1/hooks/alertmanager")
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
