"""Prometheus' query API over the store: /api/v1/query and /api/v1/query_range with PromQL.

GET with query parameters or POST with a form body, as Grafana sends them; answers and
errors in Prometheus' own shapes. The PromQL subset is correlator.promql's (docs/prometheus.md).
"""

from __future__ import annotations

import math
import time
from datetime import datetime
from typing import TYPE_CHECKING, Annotated
from urllib.parse import parse_qsl

import numpy as np
import orjson
import promql_parser
from fastapi import APIRouter, HTTPException, Query, Request, Response

from correlator.api.auth import require_reader
from correlator.api.deps import get_engine, get_settings
from correlator.api.read_limits import ReadLimits, bounded_read, read_limits
from correlator.api.schemas.promql import QueryError, QueryOut
from correlator.promql.encode import encode
from correlator.promql.evaluate import EvalError, Raw, run, steps_of
from correlator.promql.plan import MAX_DURATION_MS, Unsupported, parse_query
from correlator.selector import Selector
from correlator.store.tsdb import (
    ReadBoundError,
    TooManyPoints,
    check_deadline,
    match_series,
    read_range,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine


router = APIRouter(tags=["query"])
MAX_RESOLUTION = 11_000  # points per series, as Prometheus
# CAUSELINE_READ_MAX_POINTS bounds the points a query answers (series x steps). What it may
# hold on the way is a multiple of that: series x steps held by its selectors together, and
# stored samples read (about 40 bytes each at the peak), so a 24 h panel over a few hundred
# series answers while one query stays within a few hundred MB (Prometheus:
# query.max-samples).
EVAL_POINTS_PER_READ_POINT = 10
SAMPLES_PER_READ_POINT = 8
FORM = "application/x-www-form-urlencoded"
Param = Annotated[str | None, Query(description="as Prometheus' HTTP API (also a POST form)")]
# No response_model here: answers and errors are Prometheus' own documents, built once with
# orjson from the evaluator's arrays (up to 11,000 points a series, values as Prometheus
# writes them) and returned as they are; errors come in the same envelope with 400, 422 or
# 503. A response model would re-validate every point and answer errors in FastAPI's shape,
# so these models only document the bodies (``responses``) and never touch them.
ANSWERS: dict[int | str, dict] = {
    200: {"model": QueryOut, "description": "the result, as Prometheus answers"},
    400: {"model": QueryError, "description": "bad_data: a parameter or the query is refused"},
    422: {"model": QueryError, "description": "execution: the query cannot be evaluated"},
    503: {"model": QueryError, "description": "timeout: the read ran past its deadline"},
}


class BadParam(ValueError):
    """A request parameter Prometheus would refuse (bad_data)."""


def _error(kind: str, message: str, status: int) -> Response:
    body = {"status": "error", "errorType": kind, "error": message}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


async def _params(request: Request) -> dict[str, str]:
    params = dict(request.query_params)
    if request.method == "POST":
        if not request.headers.get("content-type", "").startswith(FORM):
            raise BadParam(f"a POST needs a {FORM} body")
        params.update(parse_qsl((await request.body()).decode("utf-8", "replace")))
    return params


def _time_ms(params: dict[str, str], name: str, default: float | None = None) -> int:
    text = params.get(name)
    if text is None or text == "":
        if default is None:
            raise BadParam(f'invalid parameter "{name}": missing')
        return round(default * 1000)
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        except ValueError:
            seconds = math.nan
    if not math.isfinite(seconds) or abs(seconds) > 9.2e15:
        raise BadParam(f'invalid parameter "{name}": cannot parse "{text}" to a valid timestamp')
    return round(seconds * 1000)


def _step_ms(text: str | None) -> int:
    if not text:
        raise BadParam('invalid parameter "step": missing')
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = promql_parser.parse_duration(text).total_seconds()
        except (ValueError, OverflowError):
            seconds = math.nan
    if not math.isfinite(seconds) or abs(seconds) * 1000 > MAX_DURATION_MS:
        raise BadParam(
            f'invalid parameter "step": cannot parse "{text}" to a valid duration of at most 10y'
        )
    step = round(seconds * 1000)
    if step <= 0:
        raise BadParam(
            "zero or negative query resolution step widths are not accepted. Try a positive integer"
        )
    return step


def _fetcher(engine: Engine, limits: ReadLimits):
    """Return a fetch for the evaluator, within the request's series and samples bounds."""
    series_seen: set[int] = set()
    samples = 0
    budget = limits.max_points * SAMPLES_PER_READ_POINT

    def fetch(selector: Selector, start_ms: int, end_ms: int) -> list[Raw]:
        nonlocal samples
        infos = match_series(  # no connection held while label regexes run
            engine=engine, selector=selector, limit=limits.max_series + 1, deadline=limits.deadline
        )
        series_seen.update(s.id for s in infos)
        if len(series_seen) > limits.max_series:
            raise limits.too_many_series(limits.max_series)
        try:
            with engine.connect() as conn:
                data = read_range(
                    conn=conn,
                    series_ids=[s.id for s in infos],
                    start=start_ms / 1000,
                    end=end_ms / 1000,
                    max_points=budget - samples,
                    deadline=limits.deadline,
                )
        except TooManyPoints:
            raise EvalError(
                f"the query reads more than {budget:,} stored samples ({SAMPLES_PER_READ_POINT} "
                "x CAUSELINE_READ_MAX_POINTS): narrow the selector or shorten the range"
            ) from None
        out = []
        for info in infos:
            got = data.get(info.id)
            if got is None:
                continue
            samples += got.ts.size
            ts = np.rint(got.ts * 1000).astype(np.int64)  # NULL values stay: stale markers
            out.append(Raw({"__name__": info.name, **info.labels}, ts, got.values))
        return out

    return fetch


def _answer_points(value) -> int:
    """Return the points an answer holds: series x the steps each has a value at."""
    if isinstance(value, np.ndarray):
        return value.size
    return sum(int(v.present.sum()) for v in value)


def _answer(
    engine: Engine, limits: ReadLimits, query: str, steps: np.ndarray, instant: bool, max_bytes: int
) -> bytes | memoryview:
    node = parse_query(query)  # here, in the thread pool: a long parse never stalls the loop

    def tick() -> None:
        check_deadline(limits.deadline)

    held = limits.max_points * EVAL_POINTS_PER_READ_POINT
    value = run(node, steps, _fetcher(engine, limits), tick, max_points=held)
    points = _answer_points(value)
    if points > limits.max_points:
        raise EvalError(
            f"the answer holds {points:,} points, more than {limits.max_points:,} "
            "(CAUSELINE_READ_MAX_POINTS): narrow the selector, aggregate, or raise step"
        )
    return encode(value, steps, instant=instant, tick=tick, max_bytes=max_bytes)


def _evaluate(*args) -> bytes | memoryview:
    """Parse, evaluate and write one query, all within the read's deadline.

    A refusal leaves without its traceback: the frames it names hold the query's arrays and
    answer buffer, which would live on with the error until the cycle collector ran.
    """
    try:
        return _answer(*args)
    except (EvalError, ReadBoundError, Unsupported) as exc:
        raise exc.with_traceback(None) from None


async def answer(request: Request, *, instant: bool) -> Response:
    """Answer a PromQL instant or range query in Prometheus' shapes."""
    await require_reader(request)
    try:
        params = await _params(request)
        if instant:
            start = end = _time_ms(params, "time", default=time.time())
            step = 1
        else:
            start, end = _time_ms(params, "start"), _time_ms(params, "end")
            step = _step_ms(params.get("step"))
            if end < start:
                raise BadParam(
                    'invalid parameter "end": end timestamp must not be before start time'
                )
            if (end - start) // step > MAX_RESOLUTION:
                raise BadParam(
                    "exceeded maximum resolution of 11,000 points per timeseries. "
                    "Try decreasing the query resolution (?step=XX)"
                )
        query = params.get("query") or ""
    except BadParam as exc:
        return _error("bad_data", str(exc), 400)
    engine, settings = get_engine(request), get_settings(request)
    limits = read_limits(settings)
    steps = steps_of(start, end, step)
    max_bytes = settings.read_max_answer_mib * 2**20
    try:
        body = await bounded_read(
            limits, _evaluate, engine, limits, query, steps, instant, max_bytes
        )
    except Unsupported as exc:
        return _error("bad_data", str(exc), 400)
    except EvalError as exc:
        return _error("execution", str(exc), 422)
    except HTTPException as exc:
        reason = exc.detail.get("reason") if isinstance(exc.detail, dict) else str(exc.detail)
        kind = "timeout" if exc.status_code == 503 else "execution"
        return _error(kind, str(reason), exc.status_code)
    return Response(body, media_type="application/json")


@router.get("/api/v1/query", responses=ANSWERS)
async def instant_query(request: Request, query: Param = None, time: Param = None) -> Response:
    """Evaluate a PromQL query at one time (default: now), as Prometheus' /api/v1/query."""
    return await answer(request, instant=True)


@router.post("/api/v1/query", responses=ANSWERS)
async def instant_query_form(request: Request) -> Response:
    """/api/v1/query with a form body (query, time), as Grafana sends it."""
    return await answer(request, instant=True)


@router.post("/api/v1/query_range", responses=ANSWERS)
async def range_query_form(request: Request) -> Response:
    """/api/v1/query_range with a form body (query, start, end, step), as Grafana sends it.

    GET /api/v1/query_range with a ``query`` parameter is answered the same way.
    """
    return await answer(request, instant=False)
