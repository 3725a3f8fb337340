"""Read endpoints: series by label matchers and range queries."""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, HTTPException, Query, Response
from starlette.concurrency import run_in_threadpool

from collector.schema import MAX_TIMESTAMP
from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep, SettingsDep
from correlator.api.process_io import read
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


Seconds = Annotated[
    float, Query(ge=0, le=MAX_TIMESTAMP, allow_inf_nan=False, description="unix seconds")
]


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


def _outside(settings, matches: list[str], start: float, end: float, step: float | None):
    """Split off the selectors of metrics the Prometheus source serves; return their series."""
    from correlator.promsource import PromSourceError, source_from_settings

    source = source_from_settings(settings)
    if source is None:
        return matches, []
    try:
        selectors = [(m, parse_selector(m)) for m in matches]
    except SelectorError as exc:
        raise HTTPException(422, {"field": "match", "reason": str(exc)}) from exc
    mine = [sel for _, sel in selectors if sel.name in source.metrics]
    if not mine:
        return matches, []
    names = sorted({sel.name for sel in mine})
    try:
        found = source.reader.read(names, start, end, step or source.step)
    except PromSourceError as exc:
        raise HTTPException(502, {"field": "match", "reason": str(exc)}) from exc
    series = [s for s in found if any(sel.matches(s.name, s.labels) for sel in mine)]
    return [m for m, sel in selectors if sel.name not in source.metrics], series


def _query(
    engine, matches: list[str], start: float, end: float, step: float | None, settings=None
) -> bytes:
    matches, outside = _outside(settings, matches, start, end, step)
    if not matches:
        return orjson.dumps(matrix_document(outside))
    infos = _select(engine, matches, MAX_QUERY_SERIES)
    with engine.connect() as conn:
        data = read_range(
            conn=conn, series_ids=[s.id for s in infos], start=start, end=end, step=step
        )
    series = [
        Series(name=s.name, labels=s.labels, ts=data[s.id].ts, values=data[s.id].values)
        for s in infos
        if s.id in data
    ]
    return orjson.dumps(matrix_document(series + outside))


@router.get("/api/v1/query_range")
async def query_range(
    engine: EngineDep,
    settings: SettingsDep,
    _reader: ReaderDep,
    match: MatchQuery,
    start: Seconds,
    end: Seconds,
    step: Annotated[
        float | None,
        Query(
            gt=0,
            le=MAX_TIMESTAMP,
            allow_inf_nan=False,
            description="seconds; when given, keep each step's lowest and highest sample",
        ),
    ] = None,
) -> Response:
    """Return the selected series in [start, end] as a matrix (mapped metrics: Prometheus)."""
    _check_window(start, end)
    body = await run_in_threadpool(_query, engine, match, start, end, step, settings)
    return Response(body, media_type="application/json")


@router.get("/api/v1/events")
async def events(
    engine: EngineDep,
    _reader: ReaderDep,
    start: Seconds,
    end: Seconds,
) -> list[dict]:
    """Return timeline events (GPU XID errors, failed checks, outside alerts) in a window."""
    _check_window(start, end)
    return await read(engine, list_events, start=start, end=end)
