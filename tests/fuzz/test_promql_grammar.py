"""PromQL drawn from a grammar against /api/v1/query and /api/v1/query_range: no 5xx or crash.

Each drawn query (tests/fuzz/promql_grammar.py: the subset causeline answers, the PromQL it
refuses, and near-valid mutations of both) goes to the instant and the range route, each by
GET and by POST form, with drawn time, start, end and step, valid or not. Every answer must be
below 500 (a 503 only as errorType "timeout"), in Prometheus' envelope (status success with
the route's resultType, or error with errorType and error), within REQUEST_TIMEOUT_S, and the
service must answer /healthz after each query. One test per engine (SQLite, PostgreSQL) over
the synthetic series of tests/promql/data.py; EXAMPLES queries, derandomized, so a run is a
fixed budget and repeats exactly. A failing test lists each distinct failure once, with the
shortest request that hit it. A failure already pinned by an xfail(strict=True) test (KNOWN)
is reported as a warning instead.
"""

from __future__ import annotations

import math
import os
import threading
import traceback
import warnings
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, example, given, settings

from collector.schema import Batch, SeriesBatch
from correlator.store.tsdb.ingest import store_batch
from tests.fuzz.promql_grammar import instant_params, queries, range_params
from tests.promql import data

pytestmark = pytest.mark.fuzz
ROOT = str(Path(__file__).resolve().parents[2])

# Drawn queries per engine, each sent four times (instant and range, GET and POST) after the
# CORPUS: SQLite fuzzes deeper, PostgreSQL adds its own store reads; the file in about 50 s on
# two cores. CAUSELINE_FUZZ_EXAMPLES=5000 sets both for a longer (nightly) run, as in
# test_openapi.py (5,000 on SQLite: about 3.5 minutes).
EXAMPLES = {"sqlite": 1000, "postgresql": 250}
if os.environ.get("CAUSELINE_FUZZ_EXAMPLES"):
    EXAMPLES = dict.fromkeys(EXAMPLES, int(os.environ["CAUSELINE_FUZZ_EXAMPLES"]))
# A request still running this long past the service's read deadline (30 s) is a hang,
# reported as a failure like a 5xx.
REQUEST_TIMEOUT_S = 45.0
ROUTES = (
    ("GET", "/api/v1/query"),
    ("POST", "/api/v1/query"),
    ("GET", "/api/v1/query_range"),
    ("POST", "/api/v1/query_range"),
)
ERROR_TYPES = {400: "bad_data", 422: "execution", 503: "timeout"}
# Failures known and pinned by an xfail(strict=True) test below, by the start of their key:
# the fuzz reports them as warnings until the fix turns that test into an XPASS (a failure),
# which is the time to remove both.
KNOWN: dict[str, str] = {}
# Requests every run sends first (hypothesis' explicit examples): failures found before,
# known ones and fixed ones, so the fixed budget always covers them.
SHORT_RANGE = {"start": str(data.START), "end": str(data.START + 600), "step": "15"}
CORPUS = [
    ("histogram_quantile(0, lat_bucket % 2)", {"time": str(data.START + 15)}, SHORT_RANGE),
    ("x + ²", {}, SHORT_RANGE),  # held a read thread for ever (the shape scan)
    ("rate(temp[100000000y])", {"time": "9.2e15"}, {**SHORT_RANGE, "step": "1e308"}),
    ("temp offset 292277026y", {"time": "-9.2e15"}, {**SHORT_RANGE, "step": "11y"}),
    ("(" * 4990 + "1" + ")" * 4990, {}, SHORT_RANGE),
]


@pytest.fixture(scope="module")
def promql_http(fuzz_app, fuzz_engine, fuzz_token):
    """Yield a client of the service over the synthetic series, with an admin token."""
    batch = Batch(
        [SeriesBatch(s.name, s.labels, s.ts.tolist(), s.values.tolist()) for s in data.series()]
    )
    store_batch(engine=fuzz_engine, batch=batch)
    with TestClient(fuzz_app) as http:
        http.headers["Authorization"] = f"Bearer {fuzz_token}"
        yield http


class Hang(Exception):
    """A request that got no answer within REQUEST_TIMEOUT_S."""


def _send(http: TestClient, method: str, path: str, params: dict[str, str]):
    """Return the answer to one request; raise what the app raised, or Hang."""
    box: dict = {}

    def call() -> None:
        try:
            if method == "GET":
                box["answer"] = http.get(path, params=params)
            else:
                box["answer"] = http.post(path, data=params)
        except BaseException as exc:  # noqa: BLE001 - the ASGI transport re-raises the app's
            box["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(REQUEST_TIMEOUT_S)
    if worker.is_alive():
        raise Hang(f"no answer within {REQUEST_TIMEOUT_S} s")
    if "error" in box:
        raise box["error"]
    return box["answer"]


def _is_sample(pair) -> bool:
    """Return whether ``pair`` is Prometheus' [unix seconds, "value"]."""
    if not (isinstance(pair, list) and len(pair) == 2):
        return False
    when, value = pair
    if not isinstance(when, int | float) or not isinstance(value, str):
        return False
    try:
        float(value)
    except ValueError:
        return False
    return math.isfinite(when)


def _result_problem(data_: dict, instant: bool) -> str | None:
    """Return what is wrong with a success's data for the route, or None."""
    kind, result = data_.get("resultType"), data_.get("result")
    allowed = ("vector", "scalar") if instant else ("matrix",)
    if kind not in allowed:
        return f"resultType {kind!r}, expected one of {allowed}"
    if kind == "scalar":
        return None if _is_sample(result) else "a scalar result that is not [time, value]"
    if not isinstance(result, list):
        return f"a {kind} result that is not a list"
    field = "value" if kind == "vector" else "values"
    for item in result:
        if not (isinstance(item, dict) and isinstance(item.get("metric"), dict)):
            return f"a {kind} item without a metric object"
        if not all(isinstance(v, str) for v in item["metric"].values()):
            return f"a {kind} item whose labels are not strings"
        samples = [item.get(field)] if kind == "vector" else item.get(field)
        if not isinstance(samples, list) or not all(_is_sample(s) for s in samples):
            return f"a {kind} item whose {field} are not [time, value] pairs"
    return None


def envelope_problem(response, instant: bool) -> str | None:
    """Return why an answer breaks the route's contract (5xx, envelope, resultType), or None."""
    code = response.status_code
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {code} with a body that is not JSON"
    if not isinstance(body, dict) or body.get("status") not in ("success", "error"):
        return f"HTTP {code} outside Prometheus' envelope"
    if body["status"] == "success":
        if code != 200:
            return f"HTTP {code} with status success"
        if not isinstance(body.get("data"), dict):
            return "a success without a data object"
        return _result_problem(body["data"], instant)
    kind, message = body.get("errorType"), body.get("error")
    if code >= 500 and (code, kind) != (503, "timeout"):
        return f"HTTP {code} ({kind})"
    if not (isinstance(kind, str) and isinstance(message, str) and message):
        return f"HTTP {code}: an error without errorType and error"
    if code < 400 or ERROR_TYPES.get(code, kind) != kind:
        return f"HTTP {code} with errorType {kind!r}"
    return None


def _where(exc: BaseException) -> str:
    """Return a crash's type and the last line of the project's code it left through."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{ROOT}/" in f.filename and "/.venv/" not in f.filename]
    at = (ours or frames)[-1] if frames else None
    place = f"{at.filename.removeprefix(ROOT + '/')}:{at.lineno}" if at else "?"
    return f"{type(exc).__name__} at {place}"


class Failures:
    """The distinct failures of a run, each with the shortest request that hit it."""

    def __init__(self) -> None:
        self.found: dict[str, tuple[int, str]] = {}
        self.known: dict[str, tuple[int, str]] = {}
        self.hung = False

    def record(self, key: str, detail: str, method: str, path: str, params: dict) -> None:
        """Keep the request for ``key`` when it is the shortest seen; known ones apart."""
        request = f"{method} {path} {params!r}"
        route = f"{method} {path}: "
        kept = self.known if key.removeprefix(route).startswith(tuple(KNOWN)) else self.found
        if key not in kept or len(request) < kept[key][0]:
            kept[key] = (len(request), f"{request}\n{detail}")

    def report(self, known: bool = False) -> str:
        """Return each failure: its key, the request (method, path, parameters) and detail."""
        kept = self.known if known else self.found
        lines = [f"--- {key}\n{text}" for key, (_, text) in sorted(kept.items())]
        what = "known failure(s), each pinned by an xfail test" if known else "failure(s)"
        return f"{len(kept)} distinct {what}:\n" + "\n".join(lines)


def fuzz_queries(http: TestClient, failures: Failures, examples: int) -> None:
    """Send ``examples`` drawn queries to every route, derandomized, no shrinking."""

    @given(query=queries(), instant=instant_params(), ranged=range_params())
    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(query: str, instant: dict[str, str], ranged: dict[str, str]) -> None:
        """Send one query to every route, then ask /healthz."""
        if failures.hung:
            return  # a held thread may hold the next requests too: send no more
        for method, path in ROUTES:
            is_instant = path == "/api/v1/query"
            params = {"query": query, **(instant if is_instant else ranged)}
            try:
                response = _send(http, method, path, params)
            except Hang as exc:
                failures.record(f"{method} {path}: hang", str(exc), method, path, params)
                failures.hung = True
                return
            except Exception as exc:  # noqa: BLE001 - every crash is recorded, then reported
                text = "".join(traceback.format_exception(exc)[-6:])
                failures.record(f"{method} {path}: {_where(exc)}", text, method, path, params)
                continue
            problem = envelope_problem(response, is_instant)
            if problem:
                detail = response.text[:600]
                failures.record(f"{method} {path}: {problem}", detail, method, path, params)
        try:
            health = _send(http, "GET", "/healthz", {}).status_code
        except Hang:
            health = None
        if health != 200:
            after = {"query": query, **instant}
            failures.record("no /healthz after", str(health), "GET", "/api/v1/query", after)

    for query, instant, ranged in CORPUS:
        run = example(query=query, instant=instant, ranged=ranged)(run)
    run()


def test_drawn_queries_never_answer_5xx_or_leave_the_envelope(promql_http, fuzz_engine):
    """Drawn queries, valid or not, on each route: below 500, in the envelope, service alive."""
    failures = Failures()
    fuzz_queries(promql_http, failures, EXAMPLES[fuzz_engine.dialect.name])
    if failures.known:
        warnings.warn(failures.report(known=True), stacklevel=1)
    still = promql_http.get("/api/v1/query", params={"query": "temp", "time": data.END})
    assert still.status_code == 200 and len(still.json()["data"]["result"]) == 2, still.text
    if failures.found:
        pytest.fail(failures.report(), pytrace=False)


def test_the_checks_refuse_what_breaks_the_contract():
    """A 500, a body outside the envelope, a wrong resultType or errorType are each caught."""

    class Answer:
        def __init__(self, status_code: int, body):
            self.status_code, self.body = status_code, body

        def json(self):
            if isinstance(self.body, str):
                raise ValueError(self.body)
            return self.body

    def error(kind: str) -> dict:
        return {"status": "error", "errorType": kind, "error": "why"}

    vector = {"status": "success", "data": {"resultType": "vector", "result": []}}
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    sample = {"metric": {"job": "a"}, "value": [1.5, "NaN"]}
    good = [
        (Answer(200, vector), True),
        (Answer(200, matrix), False),
        (Answer(400, error("bad_data")), True),
        (Answer(422, error("execution")), False),
        (Answer(503, error("timeout")), True),
        (Answer(200, {**vector, "data": {"resultType": "vector", "result": [sample]}}), True),
    ]
    for answer, instant in good:
        assert envelope_problem(answer, instant) is None, answer.body
    bad = [
        (Answer(500, "Internal Server Error"), True),
        (Answer(500, error("internal")), True),
        (Answer(503, error("unavailable")), False),
        (Answer(200, matrix), True),
        (Answer(200, vector), False),
        (Answer(400, {"detail": "no"}), True),
        (Answer(400, error("execution")), True),
        (Answer(400, {"status": "error", "error": "no type"}), True),
        (Answer(200, {**vector, "data": {"resultType": "vector", "result": [{"value": 1}]}}), True),
        (Answer(200, {**vector, "data": {"resultType": "scalar", "result": [1, 2]}}), True),
    ]
    for answer, instant in bad:
        assert envelope_problem(answer, instant), answer.body


@pytest.fixture(scope="module")
def answers(fuzz_app, promql_http):
    """Return a client that answers a crash as a 500 rather than raising it."""
    http = TestClient(fuzz_app, raise_server_exceptions=False)  # promql_http ran the lifespan
    http.headers.update(promql_http.headers)
    return http


def test_quantile_of_an_empty_lowest_bucket(answers):
    """histogram_quantile(0, x) whose lowest bucket counts 0 of more is NaN, as in Prometheus."""
    # 15 s in, lat_bucket % 2 is 0 in the 0.1 bucket of both jobs and more above it: rank 0
    # lands in the lowest bucket, of count 0: 0/0 was a ZeroDivisionError and a plain 500.
    params = {"query": "histogram_quantile(0, lat_bucket % 2)", "time": data.START + 15}
    for resp in (
        answers.get("/api/v1/query", params=params),
        answers.post("/api/v1/query", data=params),
    ):
        assert envelope_problem(resp, instant=True) is None, resp.text
        values = [r["value"][1] for r in resp.json()["data"]["result"]]
        assert values == ["NaN", "NaN"], resp.text
