"""Alert bodies: outbox rows, channels and routes (masked), silences, Alertmanager's webhook."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from correlator.alerts.inbound import parse_time
from correlator.api.handlers import Author, Body
from correlator.api.schemas.base import Labels, Number, Out
from correlator.limits import MAX_TS, Seconds


class OutboxRow(Out):
    """One rendered alert for one channel: what was sent, what failed and why."""

    id: int
    incident_id: int | None
    event: str
    channel: str
    kind: str
    status: str
    attempts: int
    next_attempt_at: Number | None = Field(description="unix seconds; set while pending")
    created_at: Number
    sent_at: Number | None
    silenced_until: Number | None
    last_error: str
    top_suspect: str
    labels: Labels
    payload: Any = Field(None, description="the rendered message (with ?payload=true)")


class RetryOut(Out):
    """A failed row put back to pending."""

    id: int
    status: str = Field(examples=["pending"])


class ChannelOut(Out):
    """A configured channel; its URL, secret and header values masked."""

    name: str
    kind: str
    url: str
    secret: str | None
    signed: bool
    rate_per_minute: int
    headers: dict[str, str | None]


class RouteOut(Out):
    """A route: which alerts (models, SLAs, teams, severity) go to which channels."""

    channels: list[str]
    models: list[str]
    slas: list[str]
    teams: list[str]
    min_severity: str
    continue_: bool = Field(alias="continue", description="whether later routes match too")


class ChannelsOut(Out):
    """The alert routes configuration as the service reads it, secrets masked."""

    channels: list[ChannelOut]
    routes: list[RouteOut]
    default: list[str] = Field(description="channels for alerts no route takes")
    public_url: str | None = Field(description="where deep links point")


class SilenceIn(Body):
    """Silence alerts whose labels (sla, model, severity, team, scope labels, channel) match."""

    matchers: dict[str, str] = Field(min_length=1, examples=[{"model": "click_rank_v3"}])
    starts_at: Seconds | None = None
    ends_at: Seconds | None = None
    duration_seconds: float | None = Field(None, gt=0, le=366 * 86400)
    comment: str = Field("", max_length=2000)
    author: Author = None

    @model_validator(mode="after")
    def _one_end(self):
        if (self.ends_at is None) == (self.duration_seconds is None):
            raise ValueError("give exactly one of ends_at or duration_seconds")
        return self


class SilenceOut(Out):
    """A stored silence and whether it is active, pending or expired."""

    id: int
    matchers: dict[str, Any]
    starts_at: Number
    ends_at: Number
    comment: str
    author: str
    created_at: Number
    state: str | None = Field(None, examples=["active", "pending", "expired"])


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
        if value is None:
            return None
        try:
            stamp = parse_time(value)
        except (ValueError, OverflowError, OSError) as exc:
            raise ValueError(f"not an RFC 3339 time: {value[:40]!r}") from exc
        if stamp is not None and not 0 <= stamp < MAX_TS:
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


class WebhookOut(Out):
    """What a webhook call did: new timeline events, incidents noted and opened."""

    events: int = Field(description="alerts stored as new timeline events")
    attached: list[int] = Field(description="incidents a note was added to")
    opened: list[int] = Field(description="incidents opened (alerts labelled causeline_sla)")
