"""A PromQL query can neither crash the service nor stall its event loop: shape, durations."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from collector.schema import Batch, SeriesBatch
from correlator.api.app import create_app
from correlator.api.read_limits import ReadLimits
from correlator.api.routes import promql as routes
from correlator.promql import range_functions as rates_module
from correlator.promql.evaluate import EvalError, steps_of
from correlator.promql.plan import Unsupported, parse_query
from correlator.promql.scan import MAX_NESTING, MAX_OPERATORS, ShapeError, check_shape
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine
from correlator.store.migrate import upgrade
from correlator.store.tsdb.ingest import store_batch
from tests.promql import data

ROOT = Path(__file__).resolve().parents[2]
CHAIN = "1" + "+1" * 4500  # 9,001 characters: overflowed the native parser's stack


def _engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'causeline.db'}")
    upgrade(engine)
    batch = Batch(
        [SeriesBatch(s.name, s.labels, s.ts.tolist(), s.values.tolist()) for s in data.series()]
    )
    store_batch(engine=engine, batch=batch)
    return engine


@pytest.fixture
def store(tmp_path):
    engine = _engine(tmp_path)
    yield engine
    engine.dispose()


def _client(engine, **settings) -> TestClient:
    return TestClient(
        create_app(ServiceSettings(database_url=str(engine.url), **settings), engine=engine)
    )


def _bad(resp, needle: str) -> None:
    assert resp.status_code == 400, resp.text
    body = resp.json()
    assert body["status"] == "error" and body["errorType"] == "bad_data", body
    assert needle in body["error"], body


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        (CHAIN, "operators"),
        ("2" + "^2" * 4500, "operators"),
        ("-" * 5000 + "1", "operators"),
        ("(" * 4990 + "1" + ")" * 4990, "nested"),
        ("abs(" * 100 + "x" + ")" * 100, "nested"),
    ],
)
def test_a_query_past_the_shape_bounds_is_refused_before_the_parser(query, needle):
    with pytest.raises(ShapeError, match=needle):
        check_shape(query)
    if len(query) < 9000:  # the 9,001-character chains crash an unguarded parser: a child's job
        with pytest.raises(Unsupported, match=needle):
            parse_query(query)


def test_the_scan_counts_only_what_the_parser_nests():
    at_bounds = "(" * MAX_NESTING + "x" + ")" * MAX_NESTING
    check_shape(at_bounds)
    check_shape("x" + " + 1" * MAX_OPERATORS)
    with pytest.raises(ShapeError, match=f"nested deeper than {MAX_NESTING}"):
        check_shape("(" + at_bounds + ")")
    with pytest.raises(ShapeError, match=f"more than {MAX_OPERATORS} operators"):
        check_shape("x" + " + 1" * (MAX_OPERATORS + 1))
    # brackets and operators inside strings and comments are text, not structure
    check_shape('x{a="' + "((((-+" * 500 + '"} # ' + "(((+" * 500 + "\n + 1")
    check_shape("x{a='\\'(((('} + y{b=`" + "(" * 100 + "`}")
    # a matcher's = != =~ !~ and a number's exponent sign are no operators
    check_shape("x{" + ",".join(f'l{i}!~"v"' for i in range(300)) + "}")
    check_shape(" + ".join(["1e-5"] * MAX_OPERATORS) + " + 0x1e")
    with pytest.raises(ShapeError, match="operators"):
        check_shape(" and ".join(["x"] * (MAX_OPERATORS + 2)))


def test_the_bounds_leave_the_native_parser_a_wide_margin_on_a_small_stack():
    """Queries at the bounds parse in a thread with 1 MiB of stack, an eighth of Linux' usual."""
    worst = [
        "x" + " + 1" * MAX_OPERATORS,
        "2" + " ^ 2" * MAX_OPERATORS,
        "(" * MAX_NESTING + "x" + ")" * MAX_NESTING,
        "abs(" * (MAX_NESTING - 1) + "x" + ")" * (MAX_NESTING - 1),
        "(" * MAX_NESTING + "1" + "+1" * (MAX_OPERATORS // 2) + ")" * MAX_NESTING,
        "-" * MAX_OPERATORS + "1",
    ]
    code = f"""
import threading
from correlator.promql.plan import parse_query, Unsupported
def parse():
    for q in {worst!r}:
        try:
            parse_query(q)
        except Unsupported:
            pass
threading.stack_size(1 << 20)
t = threading.Thread(target=parse)
t.start()
t.join()
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done


def test_the_crashing_queries_are_answered_400_by_a_running_service(tmp_path):
    """The process that used to segfault answers bad_data and keeps serving (in a child)."""
    _engine(tmp_path).dispose()
    code = f"""
from fastapi.testclient import TestClient
from correlator.api.app import create_app
from correlator.settings import ServiceSettings
url = {f"sqlite:///{tmp_path / 'causeline.db'}"!r}
with TestClient(create_app(ServiceSettings(database_url=url))) as http:
    chain = "1" + "+1" * 4500
    power = "2" + "^2" * 4500
    got = [
        http.get("/api/v1/query", params={{"query": chain}}),
        http.post("/api/v1/query_range", data={{"query": chain, "start": 0, "end": 60, "step": 1}}),
        http.get("/api/v1/query", params={{"query": power}}),
    ]
    for resp in got:
        print(resp.status_code, resp.json()["errorType"])
    print(http.get("/healthz").status_code)
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.split("\n")[:4] == ["400 bad_data"] * 3 + ["200"], done.stdout


def test_deep_parentheses_are_400_and_parsed_off_the_event_loop(store, monkeypatch):
    loops = []
    parse = routes.parse_query

    def spy(text):
        try:
            loops.append(asyncio.get_running_loop())
        except RuntimeError:
            loops.append(None)
        return parse(text)

    monkeypatch.setattr(routes, "parse_query", spy)
    with _client(store) as http:
        deep = "(" * 4990 + "1" + ")" * 4990
        _bad(http.get("/api/v1/query", params={"query": deep}), "nested deeper than 64")
        assert http.get("/api/v1/query", params={"query": "temp"}).status_code == 200
    assert loops == [None, None]  # both parses ran in the thread pool


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"query": "temp", "step": "1e308"}, 'parameter "step"'),
        ({"query": "temp", "step": "11y"}, 'parameter "step"'),
        ({"query": "rate(temp[100000000y])"}, "range"),
        ({"query": "rate(temp[11y])"}, "range"),
        ({"query": "temp offset 292277026y"}, "offset"),
        ({"query": "temp offset -11y"}, "offset"),
        ({"query": "rate(temp[5m] offset 100000000y)"}, "offset"),
    ],
)
def test_durations_past_their_bound_are_bad_data_naming_the_part(store, params, needle):
    with _client(store) as http:
        query = {"start": data.START, "end": data.END, "step": "60s", **params}
        _bad(http.get("/api/v1/query_range", params=query), needle)
        if "step" not in params:
            _bad(http.post("/api/v1/query", data={"query": params["query"]}), needle)


def test_durations_within_ten_years_are_answered(store):
    with _client(store) as http:
        for query in ("rate(req_total[9y])", "temp offset -9y", "temp offset 1h"):
            params = {"query": query, "start": data.START, "end": data.END, "step": "9y"}
            assert http.get("/api/v1/query_range", params=params).status_code == 200, query


@pytest.mark.parametrize("query", ["²", "x + ²", "٣ + 1", ".٣", "rate(x[5m]) ¹"])
def test_the_shape_scan_moves_past_digits_outside_ascii(query):
    """A Unicode digit once stopped the scan for ever, holding a read thread (found by fuzzing)."""
    done = threading.Event()
    worker = threading.Thread(target=lambda: (check_shape(query), done.set()), daemon=True)
    worker.start()
    worker.join(5)
    assert done.is_set(), f"check_shape did not finish on {query!r}"


def test_evaluation_past_the_deadline_is_503_and_stops(store, monkeypatch):
    """The deadline covers evaluation, not only the fetch: a slow evaluation stops at a tick."""
    calls = []
    rate = rates_module.window_rates

    def slow_once(*args, **kwargs):
        if not calls:
            time.sleep(1.5)  # the first series alone runs past the 1 s deadline
        calls.append(1)
        return rate(*args, **kwargs)

    monkeypatch.setattr(rates_module, "window_rates", slow_once)
    with _client(store, read_timeout_seconds=1.0) as http:
        params = {"query": "rate(req_total[5m])", "start": data.START, "end": data.END, "step": 15}
        resp = http.get("/api/v1/query_range", params=params)
        assert resp.status_code == 503, resp.text
        assert resp.json()["errorType"] == "timeout"
        assert len(calls) == 1  # it stopped at the next tick, before the next series
        monkeypatch.setattr(rates_module, "window_rates", rate)
        assert http.get("/api/v1/query_range", params=params).status_code == 200


def test_an_answer_past_its_byte_bound_is_422_naming_the_setting(store):
    params = {"query": "lat_bucket", "start": data.START, "end": data.END, "step": 0.5}
    with _client(store, read_max_answer_mib=1) as http:
        resp = http.get("/api/v1/query_range", params=params)
        assert resp.status_code == 422, resp.text
        assert resp.json()["errorType"] == "execution"
        assert "CAUSELINE_READ_MAX_ANSWER_MIB" in resp.json()["error"]
    with _client(store, read_max_answer_mib=8) as http:
        resp = http.get("/api/v1/query_range", params=params)
        assert resp.status_code == 200 and len(resp.content) > 2**20


def test_a_refused_query_keeps_no_frame_that_holds_its_arrays(store):
    """A refusal's traceback would keep the answer buffer and arrays alive until a GC pass."""
    limits = ReadLimits(
        max_series=100, max_points=10**6, seconds=30, deadline=time.monotonic() + 30
    )
    steps = steps_of(data.START * 1000, data.END * 1000, 1000)
    with pytest.raises(EvalError, match="MIB") as caught:
        routes._evaluate(store, limits, "lat_bucket", steps, False, 1000)
    frames, tb = [], caught.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert "encode" not in frames and "_answer" not in frames, frames


def test_a_day_long_latency_panel_answers_and_the_bound_counts_the_answer(tmp_path):
    """The points bound counts what a query answers, not the stored samples it reads."""
    engine = make_engine(f"sqlite:///{tmp_path / 'day.db'}")
    upgrade(engine)
    end = data.END
    ts = np.arange(end - 86_400, end + 1, 15, dtype=float)
    batch = []
    for pod in range(20):  # 20 pods x 5 buckets: 100 series, 576,100 samples over 24 h
        total = np.cumsum(np.full(ts.size, 3.0 + pod))
        for share, le in ((0.3, "0.1"), (0.6, "0.25"), (0.8, "0.5"), (0.95, "1"), (1.0, "+Inf")):
            labels = {"pod": f"p{pod}", "le": le}
            batch.append(SeriesBatch("x_bucket", labels, ts.tolist(), (total * share).tolist()))
    store_batch(engine=engine, batch=Batch(batch))
    panel = "histogram_quantile(0.99, sum by (le) (rate(x_bucket[1m])))"
    params = {"query": panel, "start": end - 86_400 + 60, "end": end, "step": 15}
    with _client(engine) as http:  # the default bound: 500,000 points
        resp = http.get("/api/v1/query_range", params=params)
        assert resp.status_code == 200, resp.text
        (series,) = resp.json()["data"]["result"]
        assert len(series["values"]) == 5757
        every = http.get("/api/v1/query_range", params={**params, "query": "x_bucket"})
        assert every.status_code == 422, every.text
        assert "the answer holds 575,700 points" in every.json()["error"]
    with _client(engine, read_max_points=50_000) as http:  # 400,000 samples may be read
        resp = http.get("/api/v1/query_range", params=params)
        assert resp.status_code == 422 and "reads more than 400,000 stored samples" in resp.text
    engine.dispose()
