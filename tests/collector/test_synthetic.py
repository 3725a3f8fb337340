"""Synthetic inference check against a local model endpoint."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from collector.schema_check import _lite, validation_error
from collector.sources.synthetic import CheckTarget, SyntheticCheckSource

CARD = {
    "name": "click_rank_v3",
    "example_input": {"user_id": "u-1", "items": ["a", "b"]},
    "output_schema": {
        "type": "object",
        "required": ["scores"],
        "properties": {
            "scores": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "number", "minimum": 0, "maximum": 1},
            }
        },
    },
}


@pytest.fixture
def model_server():
    state = {"answer": {"scores": [0.2, 0.9]}, "status": 200, "seen": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state["seen"].append(json.loads(body))
            data = json.dumps(state["answer"]).encode()
            self.send_response(state["status"])
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}/v1/predict"
    yield state
    server.shutdown()
    server.server_close()


def _get(reading, name):
    return next(s.value for s in reading.samples if s.name == name)


def test_card_example_sent_and_answer_validated(model_server):
    target = CheckTarget.from_card(CARD, url=model_server["url"])
    source = SyntheticCheckSource(
        [target], host="h", start_thread=False, wallclock=lambda: 1700000000.0
    )
    source.run_target(target)
    ok = source.sample()
    assert model_server["seen"] == [CARD["example_input"]]
    assert _get(ok, "model_probe_success") == 1
    assert _get(ok, "model_probe_schema_valid") == 1
    assert _get(ok, "model_probe_latency_ms") > 0
    assert ok.events == []

    model_server["answer"] = {"scores": [1.7]}  # a live process answering nonsense
    source.run_target(target)
    bad = source.sample()
    assert _get(bad, "model_probe_success") == 0
    assert _get(bad, "model_probe_schema_valid") == 0
    assert [e.kind for e in bad.events] == ["probe_failure"]
    assert "click_rank_v3" in bad.events[0].summary and "schema" in bad.events[0].summary
    source.run_target(target)
    assert source.sample().events == []  # one event per failure, not per check

    model_server["answer"], model_server["status"] = {"scores": [0.5]}, 200
    source.run_target(target)
    assert [e.kind for e in source.sample().events] == ["probe_recovered"]


def test_http_error_and_unreachable_fail(model_server):
    model_server["status"] = 500
    target = CheckTarget(model="m", url=model_server["url"], request={"x": 1})
    source = SyntheticCheckSource([target], host="h", start_thread=False)
    assert source.check(target)[:1] == (False,) and "HTTP 500" in source.check(target)[2]
    down = CheckTarget(model="m", url="http://127.0.0.1:9/x", request={}, timeout=1)
    ok, _, why = source.check(down)
    assert not ok and "Connect" in why


def test_thread_runs_on_its_interval(model_server):
    target = CheckTarget(model="m", url=model_server["url"], request={}, interval=0.1)
    source = SyntheticCheckSource([target], host="h")
    try:
        deadline = time.monotonic() + 5
        while len(model_server["seen"]) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        source.close()
    assert len(model_server["seen"]) >= 3


def test_card_without_example_is_refused():
    with pytest.raises(ValueError, match="no example_input"):
        CheckTarget.from_card({"name": "m"}, url="http://x")


def test_card_without_a_model_name_is_refused_with_what_to_add():
    with pytest.raises(ValueError, match="names no model: add 'name'"):
        CheckTarget.from_card({"example_input": {"x": 1}}, url="http://x")
    target = CheckTarget.from_card({"example_input": {"x": 1}}, url="http://x", model="m")
    assert target.model == "m"


@pytest.mark.parametrize(
    "instance,ok",
    [
        ({"scores": [0.1]}, True),
        ({"scores": []}, False),
        ({"scores": ["x"]}, False),
        ({}, False),
        ({"scores": [True]}, False),
        ([], False),
    ],
)
def test_lite_validator_agrees_with_jsonschema(instance, ok):
    schema = CARD["output_schema"]
    assert (_lite(instance, schema, "$") is None) == ok
    assert (validation_error(instance, schema) is None) == ok
