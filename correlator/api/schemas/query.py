"""Read bodies in Prometheus' HTTP API form: series, label names and values, metric list, events."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from correlator.api.schemas.base import Labels, Out

# Prometheus clients read these documents: keys and order are Prometheus' own.
Success = Literal["success"]


class SeriesRef(Out):
    """A series: its id in the store (null when Prometheus serves it), name and labels."""

    id: int | None
    name: str
    labels: dict[str, str]


class SeriesList(Out):
    """Matching series: ``{id, name, labels}`` each, or, asked with ``match[]``, label maps."""

    status: Success
    data: list[SeriesRef] | list[dict[str, str]] = Field(
        description="with match[]: each series' labels with __name__, as Prometheus answers",
        union_mode="left_to_right",  # the form asked for is known: no need to try both
    )


class NameList(Out):
    """Label names or one label's values (Prometheus form); warns when cut at the limit."""

    status: Success
    data: list[str]
    warnings: list[str] | None = Field(None, examples=[["results truncated due to limit"]])


class MetricInfo(Out):
    """A stored metric: how many series it has and their label names."""

    name: str
    series: int
    labels: list[str]


class MetricList(Out):
    """Stored metric names with series counts and label names, by name."""

    status: Success
    data: list[MetricInfo]
    warnings: list[str] | None = Field(None, examples=[["results truncated due to limit"]])


class EventOut(Out):
    """A point event on the timeline (GPU XID error, failed check, outside alert)."""

    id: str
    ts: float = Field(description="unix seconds")
    kind: str = Field(examples=["gpu_xid"])
    summary: str
    labels: Labels
