"""Settings of the causeline service, from arguments or CAUSELINE_* variables."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, NonNegativeInt, PositiveInt, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from collector.schema import (
    MAX_BODY_BYTES,
    MAX_LABEL_VALUE_LENGTH,
    MAX_LABELS_PER_SERIES,
    MAX_SERIES_PER_BATCH,
    BatchBounds,
)

READ_MAX_SERIES = 20_000  # the default series bound of one read (read_max_series)
Port = Annotated[int, Field(ge=1, le=65535)]
# Every float setting is seconds: finite, and above 0 (an interval or a timeout) or at
# least 0 (where 0 turns a bound off).
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
SecondsOrZero = Annotated[float, Field(ge=0, allow_inf_nan=False)]
# Reads of one family at once: each holds a read connection and a worker thread.
LaneSize = Annotated[int, Field(ge=1, le=256)]


class ServiceSettings(BaseSettings):
    """Service configuration; every field can be set as CAUSELINE_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="CAUSELINE_", extra="ignore")

    database_url: str | None = None
    bind_host: str = "127.0.0.1"
    bind_port: Port = 8400
    max_body_bytes: PositiveInt = MAX_BODY_BYTES
    max_series_per_batch: PositiveInt = MAX_SERIES_PER_BATCH
    # Ingest bounds per series and event: label count and label value length (characters).
    max_labels_per_series: PositiveInt = MAX_LABELS_PER_SERIES
    max_label_value_length: PositiveInt = MAX_LABEL_VALUE_LENGTH
    # Samples and events stamped more than this ahead of the service's clock are refused
    # (422/400 naming the field): a sender whose clock is set wrong. A day is far past any
    # NTP-kept clock and still catches a wrong date; None or 0 accepts any time up to 1e11.
    max_future_seconds: SecondsOrZero | None = 86400.0
    # "auto": reads are open when bound to loopback and need a token otherwise.
    read_auth: Literal["auto", "open", "token"] = "auto"
    # Host names the API and dashboard answer to besides loopback, the bind address and the
    # public_url's host (comma-separated; "*": any). Other names get 421 (DNS rebinding).
    allowed_hosts: str | None = None
    # Bounds of one read request (series selected, points answered, seconds spent); a read
    # past one gets 422 (503 for time) saying how to narrow it (docs/operators.md: Security).
    read_max_series: PositiveInt = READ_MAX_SERIES
    read_max_points: PositiveInt = 500_000
    read_timeout_seconds: Seconds = 30.0
    # The largest PromQL answer one query may write (MiB), so its text is bounded too.
    read_max_answer_mib: Annotated[int, Field(ge=1, le=4096)] = 128
    # The read lane (correlator/api/read_lane.py): reads of each route family run at most
    # this many at once, on their own connections and threads, so reads never starve ingest.
    read_lane_promql: LaneSize = 4  # /api/v1/query, /api/v1/query_range with query
    read_lane_metadata: LaneSize = 4  # /api/v1/series, labels, label values, metadata
    read_lane_window: LaneSize = 4  # /api/v1/query_range with match (the dashboard)
    read_lane_analysis: LaneSize = 2  # POST /api/v1/analyze
    # Reads that wait per family when it is busy (0: none), at most this long; one client
    # (bearer token, else address) holds at most read_lane_per_client running or waiting
    # reads per family. Past these: 503 with Retry-After: read_lane_retry_after_seconds.
    read_lane_queue: Annotated[int, Field(ge=0, le=10_000)] = 32
    read_lane_wait_seconds: SecondsOrZero = 10.0
    read_lane_per_client: Annotated[int, Field(ge=1, le=10_000)] = 16
    read_lane_retry_after_seconds: Annotated[int, Field(ge=1, le=3600)] = 2
    # The background SLA evaluator (off in the library; ``causeline serve`` turns it on).
    evaluator_enabled: bool = False
    evaluator_interval_seconds: Seconds = 5.0
    # How long a dead evaluator's lease keeps other processes from evaluating.
    lease_seconds: Seconds = 90.0
    # The queue-backlog autoscaling signal on /metrics.
    autoscale_window_seconds: Seconds = 300.0
    autoscale_drain_seconds: Seconds = 30.0
    autoscale_min_replicas: NonNegativeInt = 1

    # Alerts (docs/alerts.md): where deep links point, the routes file, the outbox worker.
    # Unset: this service's own address (bind_host, loopback for a wildcard, and bind_port).
    public_url: str = "http://127.0.0.1:8400"
    alert_routes_file: str | None = None
    alert_routes_json: str | None = None
    # Webhook hosts or CIDRs (comma-separated) allowed although link-local (cloud metadata)
    # or this service's own address; other such channel URLs are refused.
    alert_allowed_hosts: str | None = None
    alert_worker_enabled: bool = False
    alert_worker_interval_seconds: Seconds = 1.0
    alert_max_attempts: PositiveInt = 8
    alert_retry_base_seconds: Seconds = 2.0
    alert_retry_cap_seconds: Seconds = 300.0
    alert_http_timeout_seconds: Seconds = 10.0
    # A claimed row not finished by then (a crashed sender) is sent again.
    alert_claim_seconds: Seconds = 60.0
    # Messages about data older than this (an incident opened by evaluating a past time,
    # as after an import or a backfill) are recorded with status "stale" and not sent.
    # None or 0: send whatever the age.
    alert_max_age_seconds: SecondsOrZero | None = 3600.0
    # A firing Alertmanager alert labelled causeline_sla="<SLA>" opens that SLA's incident.
    alert_inbound_opens_incidents: bool = True
    # Chat actions (docs/alerts.md): with a secret (the same on every replica), messages
    # carry signed Acknowledge/Escalate/Snooze/Resolve links to /api/v1/act/; with Slack's
    # signing secret too, Slack buttons post to /api/v1/chat/slack/actions instead.
    action_secret: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    # An open incident nobody acknowledged is escalated to the next on call after this many
    # minutes, and again after as many more (an SLA's escalate_after_minutes wins); None: off.
    escalate_after_minutes: Annotated[float, Field(gt=0, le=10080)] | None = None

    # Prometheus-compatible source (docs/prometheus.md): metrics the mapping names are read
    # from this server, the rest from the store. No URL: everything from the store.
    prometheus_url: str | None = None
    prometheus_mapping: str | None = None  # YAML file; None: the built-in mapping
    prometheus_step_seconds: Seconds | None = None  # None: the mapping's step_seconds
    prometheus_timeout_seconds: Seconds = 30.0
    prometheus_retries: NonNegativeInt = 3

    # Retention (docs/postgresql.md): raw samples kept this many whole days, 1-minute
    # rollups longer; the job runs under the "retention" lease on every replica.
    retention_enabled: bool = False
    raw_retention_days: NonNegativeInt = 7
    rollup_retention_days: NonNegativeInt = 90
    retention_interval_seconds: Seconds = 3600.0
    # 1-minute rollups of recent raw samples (correlator/store/tsdb/rollups.py), so reads with a
    # step of a minute or more scan fewer rows: every rollup_interval_seconds (the first pass
    # one interval after start), up to rollup_max_hours hours that ended rollup_lag_seconds
    # ago, under the same lease as retention.
    rollup_enabled: bool = True
    rollup_interval_seconds: Seconds = 300.0
    rollup_lag_seconds: SecondsOrZero = 300.0
    rollup_max_hours: PositiveInt = 24
    # Compaction (correlator/store/tsdb/compaction.py): with each rollup pass, up to
    # compaction_max_hours complete hours older than compaction_head_seconds (at least an
    # hour) move from raw samples into compressed per-series chunks.
    compaction_enabled: bool = True
    compaction_head_seconds: SecondsOrZero = 7200.0
    compaction_max_hours: PositiveInt = 24

    @model_validator(mode="after")
    def _own_public_url(self) -> ServiceSettings:
        """Point deep links at this service's port when no public URL is given (--port)."""
        if "public_url" not in self.model_fields_set:
            host = self.bind_host
            if host in ("0.0.0.0", "::", ""):  # a wildcard: the machine itself answers there
                host = "127.0.0.1"
            self.public_url = (
                f"http://[{host}]:{self.bind_port}"
                if ":" in host
                else (f"http://{host}:{self.bind_port}")
            )
        return self

    def route_variables(self) -> Mapping[str, str]:
        """Return what ``${VAR}`` in the alert routes may name: the process environment.

        Channel URLs and secrets stay out of the routes file this way (``docs/alerts.md``).
        """
        return os.environ

    def latest_accepted(self, now: float) -> float | None:
        """Return the first timestamp ingest refuses at ``now`` (None: no bound)."""
        return now + self.max_future_seconds if self.max_future_seconds else None

    def batch_bounds(self, now: float) -> BatchBounds:
        """Return the bounds every push route (ingest, remote write, OTLP) parses a body under."""
        return {
            "max_series": self.max_series_per_batch,
            "max_labels": self.max_labels_per_series,
            "max_label_value": self.max_label_value_length,
            "not_after": self.latest_accepted(now),
        }

    def reads_need_token(self) -> bool:
        """Return whether read endpoints require a bearer token."""
        if self.read_auth != "auto":
            return self.read_auth == "token"
        return not is_loopback(self.bind_host)


def is_loopback(host: str) -> bool:
    """Return whether a bind address is loopback-only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_database_path(env: Mapping[str, str] | None = None) -> Path:
    """Return the embedded SQLite file: $CAUSELINE_HOME or the XDG data folder."""
    env = os.environ if env is None else env
    home = env.get("CAUSELINE_HOME")
    if home:
        return Path(home) / "causeline.db"
    data = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "causeline" / "causeline.db"


def resolve_database_url(url: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Return the URL to use: the argument, $CAUSELINE_DATABASE_URL, else the SQLite file."""
    from correlator.store.engine import with_driver

    env = os.environ if env is None else env
    url = url or env.get("CAUSELINE_DATABASE_URL")
    if url:
        return with_driver(url)
    path = default_database_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"
