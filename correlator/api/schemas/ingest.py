"""Ingest bodies: agent batches (documentation of the wire form) and what a write stored."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SeriesIn(BaseModel):
    """One series of a batch (documentation of the wire form)."""

    name: str = Field(examples=["gpu_utilization_percent"], description="metric name")
    labels: dict[str, str] = Field(default_factory=dict, examples=[{"host": "gpu-node-1"}])
    timestamps: list[float] = Field(description="unix seconds", examples=[[1733131200.0]])
    values: list[float] = Field(description="finite numbers, one per timestamp", examples=[[35.0]])


class EventIn(BaseModel):
    """A point event of a batch (documentation of the wire form)."""

    id: str = Field(description="stable id; an event is stored once per id")
    ts: float
    kind: str = Field(examples=["gpu_xid"])
    summary: str
    labels: dict[str, str] = Field(default_factory=dict)


class BatchIn(BaseModel):
    """A batch as agents send it; gzip with Content-Encoding: gzip is accepted."""

    batch_id: str | None = None
    series: list[SeriesIn]
    events: list[EventIn] = Field(default_factory=list)


class IngestOut(BaseModel):
    """What the batch did: samples given and newly stored."""

    series: int
    samples: int
    inserted: int
    events: int


class WriteOut(BaseModel):
    """What the request did (Prometheus reads only the status code)."""

    series: int
    samples: int
    inserted: int
    stale_markers: int
    non_finite: int
    native_histograms: int
