"""The SLA record: sla.json's fields (FORMAT.md) as one typed model for every reader and writer.

The bundle reader and ``causeline sla add`` check an SLA against it (``rule_problem``), the
store keeps one column per field (``correlator/store/slas.py``), and the API's SLA bodies
extend it (``correlator/api/schemas/slas.py``). Fields beyond these pass through.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from correlator.limits import MAX_NAME, Seconds
from correlator.vocabulary import DEFAULT_AGGREGATE, Aggregate, Op


class SlaRule(BaseModel):
    """Which series an SLA watches, how they fold into one value, and when it is breached."""

    model_config = ConfigDict(extra="allow")

    metric: str = Field(min_length=1, max_length=MAX_NAME, examples=["model_latency_p99_ms"])
    # Bundles may carry non-string label values; the API's bodies take strings only.
    labels: dict[str, Any] = Field(default_factory=dict)
    aggregate: Aggregate = DEFAULT_AGGREGATE
    op: Op | None = None
    threshold: float | None = Field(None, ge=-1e15, le=1e15)
    for_seconds: float = Field(0, ge=0, le=1e7)
    breach_start: Seconds | None = Field(None, description="a declared breach (unix seconds)")

    @model_validator(mode="after")
    def _threshold_can_be_crossed(self) -> SlaRule:
        """Refuse a threshold a never-negative metric always or never crosses (latency -1)."""
        if self.op is None or self.threshold is None or self.threshold >= 0:
            return self
        unit = next((u for suffix, u in NEVER_NEGATIVE if self.metric.endswith(suffix)), None)
        if unit is not None:
            always = self.op in (">", ">=")
            raise ValueError(
                f"threshold {self.threshold:g}: {self.metric} ({unit}) is never below 0, so "
                f"'{self.op} {self.threshold:g}' {'always' if always else 'never'} holds; "
                "give a threshold of 0 or more"
            )
        return self


# Metric suffixes of quantities that cannot go below zero, with their units.
NEVER_NEGATIVE = (
    ("_ms", "ms"),
    ("_seconds", "s"),
    ("_percent", "%"),
    ("_bytes", "B"),
    ("_per_second", "/s"),
    ("_total", "count"),
    ("_count", "count"),
    ("_qps", "/s"),
)
RULE_FIELDS: tuple[str, ...] = tuple(SlaRule.model_fields)


def rule_problem(sla: dict) -> str | None:
    """Return what is wrong with an SLA's rule fields, naming the field, or None when nothing.

    JSON types are taken as they are: "5" is not a number here.
    """
    try:
        SlaRule.model_validate(sla, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        if first["type"] == "missing":
            return f"'{field}' is required"
        if not field:  # a check of several fields together: its message names them
            return f"'threshold': {first['msg'].removeprefix('Value error, ')}"
        return f"'{field}': {first['msg'].lower()}, got {first['input']!r:.80}"
    return None
