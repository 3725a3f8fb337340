"""SLA bodies: the fields an SLA is written with, a new one, a replacement, the stored form."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from correlator.api.process_io import Author, Body, Seconds, Text200
from correlator.api.schemas.base import Labels, Number, Ordered


class SlaBase(Body):
    """An SLA as in FORMAT.md, plus severity, the written document and its model."""

    metric: str = Field(min_length=1, max_length=200, examples=["model_latency_p99_ms"])
    labels: dict[str, Text200] = Field(default_factory=dict)
    aggregate: Literal["max", "min", "mean", "sum"] = "max"
    op: Literal[">", "<"] | None = None
    threshold: float | None = Field(None, ge=-1e15, le=1e15)
    for_seconds: float = Field(0, ge=0, le=1e7)
    breach_start: Seconds | None = None
    severity: Literal["critical", "major", "minor", "info"] = "major"
    description: str = Field("", max_length=100_000, description="the SLA document (Markdown)")
    model: Text200 | None = None
    author: Author = None

    @model_validator(mode="after")
    def _op_and_threshold(self):
        if (self.op is None) != (self.threshold is None):
            missing = "threshold" if self.threshold is None else "op"
            raise ValueError(
                f"{missing} is required with {'op' if missing == 'threshold' else 'threshold'}"
            )
        return self


class SlaIn(SlaBase):
    """A new SLA."""

    name: str = Field(min_length=1, max_length=200, pattern=r"^[^\x00/]+$")


class SlaPut(SlaBase):
    """An SLA replacing the one named in the path (the name may be repeated)."""

    name: str | None = Field(None, max_length=200)


class SlaOut(Ordered):
    """A stored SLA: unset fields are left out; fields it was written with beyond these stay."""

    name: str
    metric: str
    labels: Labels
    aggregate: str
    op: str | None = Field(None, description="left out without a threshold")
    threshold: Number | None = None
    for_seconds: Number | None = Field(None, description="left out without a threshold")
    breach_start: Number | None = Field(None, description="a declared breach (imported)")
    severity: str | None = None
    description: str | None = Field(None, description="the SLA document (Markdown)")
    model: str | None = None
    author: str | None = None
