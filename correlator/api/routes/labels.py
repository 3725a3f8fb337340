"""Read endpoints for the label catalog: label names, label values and the metric list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Path, Query
from starlette.concurrency import run_in_threadpool

from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep
from correlator.api.read_limits import ReadLimits, ReadLimitsDep, bounded_read
from correlator.api.routes.series import parse_matches, select_series
from correlator.api.schemas.query import MetricList, NameList
from correlator.store.tsdb import SeriesInfo, label_keys_of, label_names, label_values, metric_names

if TYPE_CHECKING:
    from sqlalchemy import Engine


router = APIRouter(tags=["query"])
MAX_NAMES = 10_000
TRUNCATED = "results truncated due to limit"

LabelName = Annotated[
    str,
    Path(
        min_length=1,
        max_length=200,
        pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$",
        description="a label name; __name__ lists metric names",
    ),
]
Limit = Annotated[int, Query(ge=1, le=MAX_NAMES, description="most entries returned")]
MatchQuery = Annotated[
    list[str] | None,
    Query(
        max_length=50,
        description='only series matching any of these selectors, e.g. {service="PetSite"}',
    ),
]
PromMatchQuery = Annotated[
    list[str] | None,
    Query(alias="match[]", max_length=50, description="the same, as Prometheus clients send it"),
]


def _matching(engine: Engine, matches: list[str], limits: ReadLimits) -> list[SeriesInfo]:
    return select_series(engine, parse_matches(matches), limits.max_series, limits)


def _answer(values: list, limit: int) -> dict:
    doc: dict = {"status": "success", "data": values[:limit]}
    if len(values) > limit:
        doc["warnings"] = [TRUNCATED]
    return doc


def _names(engine: Engine, match: list[str] | None, limit: int, limits: ReadLimits) -> list[str]:
    if match:
        infos = _matching(engine, match, limits)
        keys = {k for s in infos for k in s.labels} | ({"__name__"} if infos else set())
        return sorted(keys)
    with engine.connect() as conn:
        return sorted(["__name__", *label_names(conn=conn, limit=limit + 1)])


def _values(
    engine: Engine, name: str, match: list[str] | None, limit: int, limits: ReadLimits
) -> list[str]:
    if match:
        infos = _matching(engine, match, limits)
        if name == "__name__":
            return sorted({s.name for s in infos})
        return sorted({s.labels[name] for s in infos if name in s.labels})
    with engine.connect() as conn:
        if name == "__name__":
            return [n for n, _count in metric_names(conn=conn, limit=limit + 1)]
        return label_values(conn=conn, name=name, limit=limit + 1)


@router.get("/api/v1/labels", response_model=NameList, response_model_exclude_unset=True)
async def labels(
    engine: EngineDep,
    _reader: ReaderDep,
    limits: ReadLimitsDep,
    match: MatchQuery = None,
    prom_match: PromMatchQuery = None,
    limit: Limit = 1000,
) -> dict:
    """List the label names of stored series (Prometheus form; ``__name__`` included)."""
    match = match or prom_match
    return _answer(await bounded_read(limits, _names, engine, match, limit, limits), limit)


@router.get(
    "/api/v1/label/{name}/values", response_model=NameList, response_model_exclude_unset=True
)
async def values(
    name: LabelName,
    engine: EngineDep,
    _reader: ReaderDep,
    limits: ReadLimitsDep,
    match: MatchQuery = None,
    prom_match: PromMatchQuery = None,
    limit: Limit = 1000,
) -> dict:
    """List the values one label takes across stored series (Prometheus form)."""
    match = match or prom_match
    found = await bounded_read(limits, _values, engine, name, match, limit, limits)
    return _answer(found, limit)


def _catalog(engine: Engine, limit: int, contains: str | None) -> dict:
    with engine.connect() as conn:
        names = metric_names(conn=conn, limit=limit + 1, contains=contains)
        keys = label_keys_of(conn=conn, names=[n for n, _count in names[:limit]])
    data = [{"name": name, "series": count, "labels": keys.get(name, [])} for name, count in names]
    return _answer(data, limit)


@router.get(
    "/api/v1/metadata/metrics", response_model=MetricList, response_model_exclude_unset=True
)
async def metrics(
    engine: EngineDep,
    _reader: ReaderDep,
    limit: Limit = 1000,
    contains: Annotated[
        str | None,
        Query(max_length=200, pattern=r"^[^\x00]*$", description="only names holding this text"),
    ] = None,
) -> dict:
    """List stored metric names with their series count and label names, by name."""
    return await run_in_threadpool(_catalog, engine, limit, contains)
