"""SQLAlchemy 2 typed models of everything causeline stores."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    event,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from correlator.store.millis import Millis, round_on_set


class Base(DeclarativeBase):
    """Declarative base of the store."""


# A time set on a row reads as the database will give it back (to the millisecond).
event.listen(Base, "mapper_configured", round_on_set, propagate=True)


class SeriesRow(Base):
    """A metric name plus label set, identified by its stable key."""

    __tablename__ = "series"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    labels: Mapped[dict] = mapped_column(JSON)
    histogram_id: Mapped[int | None] = mapped_column(
        ForeignKey("histograms.id"), index=True, nullable=True
    )
    le: Mapped[float | None] = mapped_column(Double, nullable=True)


class Histogram(Base):
    """A Prometheus histogram: the ``_bucket`` series sharing a name and labels but ``le``."""

    __tablename__ = "histograms"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    labels: Mapped[dict] = mapped_column(JSON)


class Sample(Base):
    """One value of a series at a millisecond timestamp; NULL value means NaN.

    The key leads with the unix hour so fresh samples of every series land in one
    small, hot part of the index instead of one page per series.
    """

    __tablename__ = "samples"
    hour: Mapped[int] = mapped_column(Integer, primary_key=True)
    series_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ts: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    value: Mapped[float | None] = mapped_column(Double, nullable=True)
    __table_args__ = ({"sqlite_with_rowid": False},)


class SampleChunk(Base):
    """A series' samples of hours [hour, end_hour] of one UTC day, compressed (tsdb/chunks.py).

    ``ts`` and ``value`` are pcodec blobs of ms timestamps and float64 values (NaN kept).
    A rowid table on SQLite: a WITHOUT ROWID row over about 1 kB spills into overflow pages.
    """

    __tablename__ = "sample_chunks"
    series_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hour: Mapped[int] = mapped_column(Integer, primary_key=True, index=True)
    end_hour: Mapped[int] = mapped_column(Integer)
    first_ts: Mapped[int] = mapped_column(BigInteger)
    last_ts: Mapped[int] = mapped_column(BigInteger)
    n_samples: Mapped[int] = mapped_column(Integer)
    ts: Mapped[bytes] = mapped_column(LargeBinary)
    value: Mapped[bytes] = mapped_column(LargeBinary)


class SampleRun(Base):
    """A series' fresh samples of one batch within one hour, uncompressed (store/tsdb/head.py).

    ``ts`` and ``value`` are little-endian int64 ms and float64 arrays (NaN kept). Runs of a
    series and hour follow one another in time; compaction moves them into chunks.
    """

    __tablename__ = "sample_runs"
    hour: Mapped[int] = mapped_column(Integer, primary_key=True)
    series_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    first_ts: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    last_ts: Mapped[int] = mapped_column(BigInteger)
    n_samples: Mapped[int] = mapped_column(Integer)
    ts: Mapped[bytes] = mapped_column(LargeBinary)
    value: Mapped[bytes] = mapped_column(LargeBinary)
    __table_args__ = ({"sqlite_with_rowid": False},)


class Event(Base):
    """A point event on the timeline (GPU XID, failed synthetic check, outside alert)."""

    __tablename__ = "events"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    ts: Mapped[float] = mapped_column(Millis, index=True)
    kind: Mapped[str] = mapped_column(String(64))
    summary: Mapped[str] = mapped_column(Text)
    labels: Mapped[dict] = mapped_column(JSON)


class Change(Base):
    """A change event of the change calendar."""

    __tablename__ = "changes"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    ts: Mapped[float | None] = mapped_column(Millis, index=True, nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(200), default="")
    summary: Mapped[str] = mapped_column(Text, default="")
    owner: Mapped[str] = mapped_column(String(32), default="")
    labels: Mapped[dict] = mapped_column(JSON, default=dict)
    extra: Mapped[dict] = mapped_column(JSON, default=dict)
    person: Mapped[str | None] = mapped_column(String(200), nullable=True)
    scope: Mapped[str | None] = mapped_column(Text, nullable=True)
    planned_ts: Mapped[float | None] = mapped_column(Millis, nullable=True)
    registered_at: Mapped[float | None] = mapped_column(Millis, nullable=True)
    rollout_stage: Mapped[str | None] = mapped_column(String(32), nullable=True)
    canary_percent: Mapped[float | None] = mapped_column(Double, nullable=True)
    version: Mapped[str | None] = mapped_column(String(100), nullable=True)
    author: Mapped[str | None] = mapped_column(String(200), nullable=True)


class TopologyNode(Base):
    """A node of the service graph: model, instance, host, feature service..."""

    __tablename__ = "topology_nodes"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    owner: Mapped[str] = mapped_column(String(32), default="")
    attrs: Mapped[dict] = mapped_column(JSON, default=dict)


class TopologyEdge(Base):
    """A directed edge of the service graph (serves, runs_on, calls)."""

    __tablename__ = "topology_edges"
    src: Mapped[str] = mapped_column(String(200), primary_key=True)
    dst: Mapped[str] = mapped_column(String(200), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64), primary_key=True)


class Sla(Base):
    """A service-level objective on one metric and label set."""

    __tablename__ = "slas"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    metric: Mapped[str] = mapped_column(String(200))
    labels: Mapped[dict] = mapped_column(JSON, default=dict)
    aggregate: Mapped[str] = mapped_column(String(8), default="max")
    op: Mapped[str | None] = mapped_column(String(2), nullable=True)
    threshold: Mapped[float | None] = mapped_column(Double, nullable=True)
    for_seconds: Mapped[float] = mapped_column(Double, default=0)
    breach_start: Mapped[float | None] = mapped_column(Millis, nullable=True)
    extra: Mapped[dict] = mapped_column(JSON, default=dict)


class Token(Base):
    """An API token; only its SHA-256 hash is kept."""

    __tablename__ = "tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[float] = mapped_column(Millis)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    # ingest < write < admin (correlator.store.tokens.SCOPES).
    scope: Mapped[str] = mapped_column(String(16), default="admin", server_default="admin")
    # A revoked token's name may be used again: names are unique among active tokens only.
    __table_args__ = (
        Index(
            "uq_tokens_active_name",
            "name",
            unique=True,
            sqlite_where=text("NOT revoked"),
            postgresql_where=text("NOT revoked"),
        ),
    )


class Fingerprint(Base):
    """An environment fingerprint of a host (and model instance) at a time."""

    __tablename__ = "fingerprints"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(200))
    instance: Mapped[str] = mapped_column(String(200), default="")
    model: Mapped[str] = mapped_column(String(200), default="")
    ts: Mapped[float] = mapped_column(Millis)
    digest: Mapped[str] = mapped_column(String(64))
    body: Mapped[dict] = mapped_column(JSON)
    __table_args__ = (
        UniqueConstraint("host", "instance", "model", "digest", name="uq_fingerprint_digest"),
        Index("ix_fingerprints_host_ts", "host", "ts"),
    )


class Model(Base):
    """A served model of the registry."""

    __tablename__ = "models"
    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    owner: Mapped[str] = mapped_column(String(32), default="algo")
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[float] = mapped_column(Millis)
    author: Mapped[str] = mapped_column(String(200), default="")


class ModelVersion(Base):
    """A version of a model and its model card."""

    __tablename__ = "model_versions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model: Mapped[str] = mapped_column(ForeignKey("models.name", ondelete="CASCADE"))
    version: Mapped[str] = mapped_column(String(100))
    card: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    card_updated_at: Mapped[float | None] = mapped_column(Millis, nullable=True)
    card_author: Mapped[str] = mapped_column(String(200), default="")
    __table_args__ = (UniqueConstraint("model", "version", name="uq_model_version"),)


class ModelInstance(Base):
    """A running instance of a model version on a host."""

    __tablename__ = "model_instances"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model: Mapped[str] = mapped_column(ForeignKey("models.name", ondelete="CASCADE"))
    instance: Mapped[str] = mapped_column(String(200))
    version: Mapped[str] = mapped_column(String(100), default="")
    host: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[float] = mapped_column(Millis)
    author: Mapped[str] = mapped_column(String(200), default="")
    __table_args__ = (UniqueConstraint("model", "instance", name="uq_model_instance"),)


class Recording(Base):
    """An imported incident bundle: its window, declared breach and baseline recording.

    The analysis of a bundle uses exactly the bundle's window and its baseline; keeping
    both lets the store give the same answer as the bundle it came from.
    """

    __tablename__ = "recordings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sla: Mapped[str] = mapped_column(String(200), index=True)
    # The first and last metric sample of the bundle (stored to the millisecond, outward).
    start: Mapped[float] = mapped_column(Millis)
    end: Mapped[float] = mapped_column(Millis)
    # Set when the breach was declared by an outside alert (sla.json's breach_start).
    breach_start: Mapped[float | None] = mapped_column(Millis, nullable=True)
    source: Mapped[str] = mapped_column(String(500), default="")
    imported_at: Mapped[float] = mapped_column(Millis)
    # The baseline recording, gzip-compressed Prometheus matrix JSON (FORMAT.md), or NULL.
    baseline: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    __table_args__ = (UniqueConstraint("sla", "start", "end", name="uq_recordings_window"),)


class Incident(Base):
    """An SLA breach under investigation, with its snapshot of suspects."""

    __tablename__ = "incidents"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sla: Mapped[str] = mapped_column(String(200), index=True)
    # The SLA's name while open, NULL once resolved: at most one open incident per SLA.
    open_slot: Mapped[str | None] = mapped_column(String(200), unique=True, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="open")
    severity: Mapped[str] = mapped_column(String(16), default="major")
    breach_start: Mapped[float] = mapped_column(Millis)
    breach_end: Mapped[float | None] = mapped_column(Millis, nullable=True)
    opened_at: Mapped[float] = mapped_column(Millis)
    resolved_at: Mapped[float | None] = mapped_column(Millis, nullable=True)
    resolved_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    acknowledged_at: Mapped[float | None] = mapped_column(Millis, nullable=True)
    acknowledged_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # Whom it is with now (assigned, acknowledged or escalated to), and its escalations.
    assignee: Mapped[str | None] = mapped_column(String(200), nullable=True)
    escalations: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    escalated_at: Mapped[float | None] = mapped_column(Millis, nullable=True)
    # Until then, no escalation by itself and its messages are held (a snoozed repeat).
    snoozed_until: Mapped[float | None] = mapped_column(Millis, nullable=True)
    reranked_at: Mapped[float | None] = mapped_column(Millis, nullable=True)
    opened_by: Mapped[str] = mapped_column(String(200), default="")
    snapshot: Mapped[dict] = mapped_column(JSON, default=dict)


class IncidentNote(Base):
    """A timestamped note on an incident from one team."""

    __tablename__ = "incident_notes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(
        ForeignKey("incidents.id", ondelete="CASCADE"), index=True
    )
    ts: Mapped[float] = mapped_column(Millis)
    author: Mapped[str] = mapped_column(String(200), default="")
    team: Mapped[str] = mapped_column(String(16), default="other")
    text: Mapped[str] = mapped_column(Text)


class OncallRotation(Base):
    """A weekly (or other period) rotation of one team's on-call contacts."""

    __tablename__ = "oncall_rotations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    team: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(200), default="")
    members: Mapped[list] = mapped_column(JSON)
    start: Mapped[float] = mapped_column(Millis)
    period_seconds: Mapped[int] = mapped_column(BigInteger)
    author: Mapped[str] = mapped_column(String(200), default="")


class OncallOverride(Base):
    """A person on call for a team in place of the rotation for a while."""

    __tablename__ = "oncall_overrides"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(200), default="")
    person: Mapped[str] = mapped_column(String(200))
    contact: Mapped[str] = mapped_column(String(200), default="")
    start: Mapped[float] = mapped_column(Millis)
    end: Mapped[float] = mapped_column(Millis)
    reason: Mapped[str] = mapped_column(Text, default="")
    author: Mapped[str] = mapped_column(String(200), default="")


class Lease(Base):
    """A named lease held by one process until it expires (the SLA evaluator's)."""

    __tablename__ = "leases"
    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200), default="")
    expires_at: Mapped[float] = mapped_column(Millis, default=0)


class AlertOutbox(Base):
    """One rendered alert for one channel, written with the incident change, sent by a worker."""

    __tablename__ = "alert_outbox"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # One row per (incident, event, channel[, top suspect]): a repeated enqueue adds nothing.
    dedup_key: Mapped[str] = mapped_column(String(400), unique=True)
    incident_id: Mapped[int | None] = mapped_column(Integer, index=True, nullable=True)
    event: Mapped[str] = mapped_column(String(16))
    channel: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict] = mapped_column(JSON)
    labels: Mapped[dict] = mapped_column(JSON, default=dict)
    top_suspect: Mapped[str] = mapped_column(String(500), default="")
    # pending -> sending -> sent | failed; silenced while a silence matches.
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[float] = mapped_column(Millis, default=0)
    claimed_by: Mapped[str] = mapped_column(String(200), default="")
    claimed_until: Mapped[float] = mapped_column(Millis, default=0)
    created_at: Mapped[float] = mapped_column(Millis)
    sent_at: Mapped[float | None] = mapped_column(Millis, nullable=True)
    refreshed_at: Mapped[float | None] = mapped_column(Millis, nullable=True)
    silenced_until: Mapped[float | None] = mapped_column(Millis, nullable=True)
    last_error: Mapped[str] = mapped_column(Text, default="")
    __table_args__ = (
        Index("ix_alert_outbox_due", "status", "next_attempt_at"),
        Index("ix_alert_outbox_channel_sent", "channel", "sent_at"),
    )


class AlertSilence(Base):
    """A silence: alerts whose labels match are not sent until it ends."""

    __tablename__ = "alert_silences"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    matchers: Mapped[dict] = mapped_column(JSON)
    starts_at: Mapped[float] = mapped_column(Millis)
    ends_at: Mapped[float] = mapped_column(Millis, index=True)
    comment: Mapped[str] = mapped_column(Text, default="")
    author: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[float] = mapped_column(Millis)


class SampleRollup(Base):
    """One minute of a series rolled up from raw samples: min, max, sum, count of values.

    ``ts`` is the minute's start in unix milliseconds; NaN (NULL) values are not counted.
    """

    __tablename__ = "samples_1m"
    hour: Mapped[int] = mapped_column(Integer, primary_key=True)
    series_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ts: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    min: Mapped[float | None] = mapped_column(Double, nullable=True)
    max: Mapped[float | None] = mapped_column(Double, nullable=True)
    sum: Mapped[float | None] = mapped_column(Double, nullable=True)
    count: Mapped[int] = mapped_column(Integer)
    __table_args__ = ({"sqlite_with_rowid": False},)


class RollupHour(Base):
    """Whether samples_1m answers for an hour of raw samples (states in tsdb/rollup_state.py)."""

    __tablename__ = "samples_1m_hours"
    hour: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    state: Mapped[int] = mapped_column(SmallInteger)
