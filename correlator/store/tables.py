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
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base of the store."""


class Series(Base):
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
    """One value of a series at a millisecond timestamp; NULL value means NaN."""

    __tablename__ = "samples"
    series_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ts: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    value: Mapped[float | None] = mapped_column(Double, nullable=True)
    __table_args__ = ({"sqlite_with_rowid": False},)


class Event(Base):
    """A point event on the timeline (GPU XID, failed synthetic check, outside alert)."""

    __tablename__ = "events"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    ts: Mapped[int] = mapped_column(BigInteger, index=True)
    kind: Mapped[str] = mapped_column(String(64))
    summary: Mapped[str] = mapped_column(Text)
    labels: Mapped[dict] = mapped_column(JSON)


class Change(Base):
    """A change event of the change calendar."""

    __tablename__ = "changes"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    ts: Mapped[int | None] = mapped_column(BigInteger, index=True, nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(200), default="")
    summary: Mapped[str] = mapped_column(Text, default="")
    owner: Mapped[str] = mapped_column(String(32), default="")
    labels: Mapped[dict] = mapped_column(JSON, default=dict)
    extra: Mapped[dict] = mapped_column(JSON, default=dict)


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
    breach_start: Mapped[float | None] = mapped_column(Double, nullable=True)
    extra: Mapped[dict] = mapped_column(JSON, default=dict)


class Token(Base):
    """An API token; only its SHA-256 hash is kept."""

    __tablename__ = "tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[int] = mapped_column(BigInteger)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)


class Fingerprint(Base):
    """An environment fingerprint of a host (and model instance) at a time."""

    __tablename__ = "fingerprints"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(200))
    instance: Mapped[str] = mapped_column(String(200), default="")
    model: Mapped[str] = mapped_column(String(200), default="")
    ts: Mapped[int] = mapped_column(BigInteger)
    digest: Mapped[str] = mapped_column(String(64))
    body: Mapped[dict] = mapped_column(JSON)
    __table_args__ = (
        UniqueConstraint("host", "instance", "model", "digest", name="uq_fingerprint_digest"),
        Index("ix_fingerprints_host_ts", "host", "ts"),
    )
