"""SLA bodies: the fields an SLA is written with, a new one, a replacement, the stored form."""

from __future__ import annotations

from pydantic import ConfigDict, Field, model_validator

from correlator.api.handlers import Author, Body
from correlator.api.schemas.base import Labels, Number, Ordered
from correlator.limits import MAX_DESCRIPTION, MAX_NAME, NAME_PATTERN, Text200
from correlator.records.sla import SlaRule
from correlator.vocabulary import DEFAULT_SEVERITY, Severity


class SlaBase(Body, SlaRule):
    """An SLA's record (``correlator.records.sla``), plus severity, its document and model."""

    model_config = ConfigDict(extra="forbid")  # a body takes only the fields it declares

    labels: dict[str, Text200] = Field(default_factory=dict)  # strings only, unlike bundles'
    severity: Severity = DEFAULT_SEVERITY
    description: str = Field(
        "", max_length=MAX_DESCRIPTION, description="the SLA document (Markdown)"
    )
    model: Text200 | None = None
    escalate_after_minutes: float | None = Field(
        None,
        gt=0,
        le=10080,
        description="escalate an unacknowledged incident to the next on call after this long",
    )
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

    name: str = Field(min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)


class SlaPut(SlaBase):
    """An SLA replacing the one named in the path (the name may be repeated)."""

    name: str | None = Field(None, max_length=MAX_NAME)


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
    escalate_after_minutes: Number | None = None
    author: str | None = None
