"""Read endpoints: series by label matchers and range queries."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from starlette.concurrency import run_in_threadpool

from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep
from correlator.bundle import Series, matrix_document
from correlator.selector import SelectorError, parse_selector
from correlator.store.events import list_events
from correlator.store.samples import read_range
from correlator.store.series import SeriesInfo, find_series

router = APIRouter(tags=["query"])
MAX_QUERY_SERIES = 20_000

MatchQuery = Annotated[
    list[str],
    Query(
        description='series selector, repeatable: name{label="v",other=~"re.*"}',
        examples=['model_latency_p99_ms{model="click_rank_v3"}'],
    ),
]


def _select(engine, matches: list[str], limit: int) -> list[SeriesInfo]:
    try:
        selectors = [parse_selector(m) for m in matches]
    except SelectorError as exc:
        raise HTTPException(422, {"field": "match", "reason": str(exc)}) from exc
    found: dict[int, SeriesInfo] = {}
    with engine.connect() as conn:
        for sel in selectors:
            for info in find_series(conn=conn, selector=sel, limit=limit + 1):
                found[info.id] = info
    if len(found) > limit:
        raise HTTPException(
            422, {"field": "match", "reason": f"selects more than {limit} series; narrow it"}
        )
    return sorted(found.values(), key=lambda s: s.id)


def _check_window(start: float, end: float) -> None:
    if end < start:
        raise HTTPException(422, {"field": "end", "reason": "must not be before start"})


@router.get("/api/v1/series")
async def list_series(
    engine: EngineDep,
    _reader: ReaderDep,
    match: MatchQuery,
    limit: Annotated[int, Query(ge=1, le=MAX_QUERY_SERIES)] = 1000,
) -> dict:
    """List series (id, name, labels) matching any of the selectors."""
    infos = await run_in_threadpool(_select, engine, match, limit)
    return {
        "status": "success",
        "data": [{"id": s.id, "name": s.name, "labels": s.labels} for s in infos],
    }


def _query(engine, matches: list[str], start: float, end: float) -> dict:
    infos = _select(engine, matches, MAX_QUERY_SERIES)
    with engine.connect() as conn:
        data = read_range(conn=conn, series_ids=[s.id for s in infos], start=start, end=end)
    series = [
        Series(name=s.name, labels=s.labels, ts=data[s.id].ts, values=data[s.id].values)
        for s in infos
        if s.id in data
    ]
    return matrix_document(series)


@router.get("/api/v1/query_range")
async def query_range(
    engine: EngineDep,
    _reader: ReaderDep,
    match: MatchQuery,
    start: Annotated[float, Query(description="unix seconds")],
    end: Annotated[float, Query(description="unix seconds")],
) -> dict:
    """Return samples of the selected series in [start, end], in Prometheus matrix form."""
    _check_window(start, end)
    return await run_in_threadpool(_query, engine, match, start, end)


@router.get("/api/v1/events")
async def events(
    engine: EngineDep,
    _reader: ReaderDep,
    start: Annotated[float, Query(description="unix seconds")],
    end: Annotated[float, Query(description="unix seconds")],
) -> list[dict]:
    """Return timeline events (GPU XID errors, failed checks, outside alerts) in a window."""
    _check_window(start, end)

    def run():
        with engine.connect() as conn:
            return list_events(conn=conn, start=start, end=end)

    return await run_in_threadpool(run)
