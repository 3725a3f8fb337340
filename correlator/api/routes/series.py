"""Read endpoints: series by label matchers and range queries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import orjson
from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.routing import APIRoute

from collector.schema import MAX_TIMESTAMP
from correlator.api.auth import ReaderDep
from correlator.api.deps import EngineDep, SourceDep
from correlator.api.handlers import now, read
from correlator.api.read_limits import ReadLimits, ReadLimitsDep, bounded_read
from correlator.api.routes import promql
from correlator.api.schemas.query import EventOut, SeriesList
from correlator.bundle import Series, matrix_document
from correlator.promsource import PromSourceError
from correlator.selector import Selector, SelectorError, parse_selector
from correlator.settings import READ_MAX_SERIES
from correlator.store.events import list_events
from correlator.store.tsdb import SeriesInfo, find_series, match_series, read_range

if TYPE_CHECKING:
    from sqlalchemy import Engine


router = APIRouter(tags=["query"])
# The most ``limit`` may ask (the default read_max_series); the setting bounds it further.
MAX_QUERY_SERIES = READ_MAX_SERIES
# Without start/end, /api/v1/series lists Prometheus series present in the last day.
SERIES_WINDOW_S = 86_400.0

_MATCH = Query(
    description='series selector, repeatable: name{label="v",other=~"re.*"}',
    examples=['model_latency_p99_ms{model="click_rank_v3"}'],
)
MatchQuery = Annotated[list[str], _MATCH]
OptionalMatchQuery = Annotated[list[str] | None, _MATCH]
# Prometheus clients (Grafana, prometheus-api-client) send match[]: they get its answer form.
PromMatchQuery = Annotated[
    list[str] | None,
    Query(alias="match[]", description="series selectors as Prometheus clients send them"),
]


def parse_matches(matches: list[str]) -> list[Selector]:
    """Return the parsed ``match`` selectors; 422 naming the field for a bad one."""
    try:
        return [parse_selector(m) for m in matches]
    except SelectorError as exc:
        raise HTTPException(422, {"field": "match", "reason": str(exc)}) from exc


def select_series(
    engine: Engine, selectors: list[Selector], limit: int, limits: ReadLimits
) -> list[SeriesInfo]:
    """Return the stored series any selector matches, by id; 422 past ``limit`` of them."""
    found: dict[int, SeriesInfo] = {}
    deadline = limits.deadline
    for sel in selectors:  # no connection is held while regexes run
        matched = match_series(engine=engine, selector=sel, limit=limit + 1, deadline=deadline)
        found.update((info.id, info) for info in matched)
        if len(found) > limit:
            raise limits.too_many_series(limit)
    return sorted(found.values(), key=lambda s: s.id)


def split_selectors(engine: Engine, source, selectors: list[Selector]):
    """Return (store, mapped, raw) selectors: the per-metric rule of docs/prometheus.md.

    With a source, a metric the mapping serves is read through it; a named metric the
    mapping does not know and the store has no series of is read from Prometheus as it is;
    everything else (and every selector without a source) is read from the store.
    """
    if source is None:
        return selectors, [], []
    store, mapped, raw = [], [], []
    with engine.connect() as conn:
        for sel in selectors:
            if sel.name in source.metrics:
                mapped.append(sel)
            elif sel.name and not find_series(conn=conn, selector=Selector(sel.name), limit=1):
                raw.append(sel)
            else:
                store.append(sel)
    return store, mapped, raw


def _outside(source, mapped, raw, start: float, end: float, step: float | None) -> list[Series]:
    """Return the series the Prometheus source serves for mapped and raw selectors."""
    found: list[Series] = []
    try:
        if mapped:  # one read for every mapped selector
            found += source.select(*mapped, start=start, end=end, step=step)
        for sel in raw:
            found += source.select_raw(sel, start=start, end=end, step=step)
    except PromSourceError as exc:
        raise HTTPException(502, {"field": "match", "reason": str(exc)}) from exc
    unique = {(s.name, tuple(sorted(s.labels.items()))): s for s in found}
    return list(unique.values())


Seconds = Annotated[
    float, Query(ge=0, le=MAX_TIMESTAMP, allow_inf_nan=False, description="unix seconds")
]


MaybeSeconds = Annotated[
    float | None,
    Query(
        ge=0,
        le=MAX_TIMESTAMP,
        allow_inf_nan=False,
        description="unix seconds; bounds the series read from Prometheus (default: last 24 h)",
    ),
]


def _check_window(start: float, end: float) -> None:
    if end < start:
        raise HTTPException(422, {"field": "end", "reason": "must not be before start"})


@router.get("/api/v1/series", response_model=SeriesList, response_model_exclude_unset=True)
async def list_series(
    engine: EngineDep,
    source: SourceDep,
    _reader: ReaderDep,
    limits: ReadLimitsDep,
    match: OptionalMatchQuery = None,
    prom_match: PromMatchQuery = None,
    limit: Annotated[int, Query(ge=1, le=MAX_QUERY_SERIES)] = 1000,
    start: MaybeSeconds = None,
    end: MaybeSeconds = None,
) -> dict:
    """List series matching any selector: stored ones, and Prometheus ones in [start, end].

    Called with ``match[]``, as Prometheus clients do, each series is its label map with
    ``__name__``, as Prometheus answers; with ``match``, ``{id, name, labels}``.
    """
    selectors = match or prom_match
    if not selectors:
        raise HTTPException(422, {"field": "match", "reason": "give at least one selector"})
    end = now() if end is None else end
    start = max(0.0, end - SERIES_WINDOW_S) if start is None else start
    _check_window(start, end)
    limit = limits.series_cap(limit)
    found = await bounded_read(limits, _list, engine, source, selectors, limit, start, end, limits)
    if prom_match and not match:
        found = [{"__name__": s["name"], **s["labels"]} for s in found]
    return {"status": "success", "data": found}


def _list(
    engine: Engine,
    source,
    matches: list[str],
    limit: int,
    start: float,
    end: float,
    limits: ReadLimits,
) -> list[dict]:
    store, mapped, raw = split_selectors(engine, source, parse_matches(matches))
    infos = select_series(engine, store, limit, limits) if store else []
    out = [{"id": s.id, "name": s.name, "labels": s.labels} for s in infos]
    if mapped or raw:
        # Labels only: a coarse resolution (about 120 points) is enough to see every series.
        step = max(source.step or source.reader.mapping.step_seconds, (end - start) / 120)
        outside = _outside(source, mapped, raw, start, end, step)
        out += [{"id": None, "name": s.name, "labels": s.labels} for s in outside]
    if len(out) > limit:
        raise limits.too_many_series(limit)
    return out


def _query(
    engine: Engine,
    source,
    matches: list[str],
    start: float,
    end: float,
    step: float | None,
    limits: ReadLimits,
) -> bytes:
    store, mapped, raw = split_selectors(engine, source, parse_matches(matches))
    outside = _outside(source, mapped, raw, start, end, step) if mapped or raw else []
    points_left = limits.max_points - sum(len(s.ts) for s in outside)
    if points_left < 0:
        raise limits.too_many_points()
    infos = select_series(engine, store, limits.max_series, limits) if store else []
    if len(infos) + len(outside) > limits.max_series:
        raise limits.too_many_series(limits.max_series)
    if not infos:
        return orjson.dumps(matrix_document(outside))
    with engine.connect() as conn:
        data = read_range(
            conn=conn,
            series_ids=[s.id for s in infos],
            start=start,
            end=end,
            step=step,
            max_points=points_left,
            deadline=limits.deadline,
        )
    series = [
        Series(name=s.name, labels=s.labels, ts=data[s.id].ts, values=data[s.id].values)
        for s in infos
        if s.id in data
    ]
    return orjson.dumps(matrix_document(series + outside))


class PromQLAware(APIRoute):
    """GET with a ``query`` parameter is Prometheus' PromQL query (routes/promql.py)."""

    def get_route_handler(self):
        store_read = super().get_route_handler()

        async def handler(request: Request) -> Response:
            if "query" in request.query_params:
                return await promql.answer(request, instant=False)
            return await store_read(request)

        return handler


async def query_range(
    engine: EngineDep,
    source: SourceDep,
    _reader: ReaderDep,
    limits: ReadLimitsDep,
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
    """Return the selected series in [start, end] as a matrix (docs/prometheus.md: which source)."""
    _check_window(start, end)
    body = await bounded_read(limits, _query, engine, source, match, start, end, step, limits)
    return Response(body, media_type="application/json")


# Added after its definition to answer PromQL (``query``) too; see PromQLAware.
# Its store read answers Prometheus' matrix as built bytes, like routes/promql.py (no
# response_model, for the reason given there); only the success form is shared by both.
router.add_api_route(
    "/api/v1/query_range",
    query_range,
    methods=["GET"],
    route_class_override=PromQLAware,
    responses={200: promql.ANSWERS[200]},
)


@router.get("/api/v1/events", response_model=list[EventOut], response_model_exclude_unset=True)
async def events(
    engine: EngineDep,
    _reader: ReaderDep,
    start: Seconds,
    end: Seconds,
) -> list[dict]:
    """Return timeline events (GPU XID errors, failed checks, outside alerts) in a window."""
    _check_window(start, end)
    return await read(engine, list_events, start=start, end=end)
