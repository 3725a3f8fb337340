"""Prometheus' query API bodies, for the API reference only (routes/promql.py says why)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from correlator.api.schemas.base import Number

# [unix seconds, value]: the value a string, as Prometheus writes it ("NaN", "+Inf", "1.5").
Sample = tuple[Number, str]


class RangeSeries(BaseModel):
    """One series of a matrix: its labels (``__name__`` included) and samples."""

    metric: dict[str, str]
    values: list[Sample]


class InstantSeries(BaseModel):
    """One series of a vector: its labels and the sample at the query's time."""

    metric: dict[str, str]
    value: Sample


class QueryData(BaseModel):
    """The result: a matrix (query_range), a vector or a scalar (query)."""

    resultType: Literal["matrix", "vector", "scalar"]  # noqa: N815 (Prometheus' field names)
    result: list[RangeSeries] | list[InstantSeries] | Sample


class QueryOut(BaseModel):
    """A successful answer of /api/v1/query or /api/v1/query_range."""

    status: Literal["success"]
    data: QueryData


class QueryError(BaseModel):
    """A refused or failed query, in Prometheus' form."""

    status: Literal["error"]
    errorType: str = Field(examples=["bad_data", "execution", "timeout"])  # noqa: N815
    error: str
