"""The SLA record: sla.json's fields (FORMAT.md) as one typed model for every reader and writer.

The bundle reader and ``causeline sla add`` check an SLA against it (``rule_problem``), the
store keeps one column per field (``correlator/store/slas.py``), and the API's SLA bodies
extend it (``correlator/api/schemas/slas.py``). Fields beyond these pass through.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
        return f"'{field}': {first['msg'].lower()}, got {first['input']!r:.80}"
    return None
