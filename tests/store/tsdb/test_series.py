"""A hostile label regex cannot stall a real service process, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from collector.schema import series_key
from correlator.store.engine import write_transaction
from correlator.store.tsdb.series import ensure_series
from tests.helpers import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[3]
POD = "a" * 28  # Python's backtracking re takes tens of seconds on (.*)*Z against this
HOSTILE = '{pod=~"(.*)*Z"}'


@pytest.fixture
def served(engine, tmp_path):
    """Yield the base URL of ``causeline serve`` on a database holding one long pod name."""
    labels = {"pod": POD}
    with write_transaction(engine) as conn:
        ensure_series(conn=conn, items={series_key("up", labels): ("up", labels)})
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "causeline.cli", "serve", "--port", str(port)]
    cmd += ["--database-url", str(engine.url.render_as_string(hide_password=False))]
    cmd += ["--no-evaluator", "--no-alerts"]
    with open(tmp_path / "serve.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(base, proc, tmp_path / "serve.log")
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_healthz_answers_while_a_hostile_regex_read_runs(served):
    answers: list[httpx.Response] = []

    def hostile() -> None:
        params = {"match": HOSTILE}
        answers.append(httpx.get(served + "/api/v1/series", params=params, timeout=120))

    reader = threading.Thread(target=hostile, daemon=True)
    reader.start()
    time.sleep(0.3)  # the hostile read is in the service before the probe
    began = time.monotonic()
    health = httpx.get(served + "/healthz", timeout=120)
    waited = time.monotonic() - began
    reader.join(120)
    assert health.status_code == 200
    assert waited < 1.0, f"/healthz took {waited:.1f} s while {HOSTILE} was matched"
    assert answers and answers[0].status_code == 200, answers and answers[0].text
    assert answers[0].json()["data"] == []  # no Z in the pod name: nothing matches


def test_regexes_keep_their_meaning_and_bad_ones_get_422(served):
    def series(match: str) -> httpx.Response:
        return httpx.get(served + "/api/v1/series", params={"match": match}, timeout=30)

    assert [s["labels"]["pod"] for s in series('up{pod=~"(a*)*"}').json()["data"]] == [POD]
    assert series('up{pod!~"a{28}"}').json()["data"] == []
    for bad in ('{pod=~"(a"}', '{pod=~"(?=a)"}', '{pod=~"((a{1000}){1000}){1000}"}'):
        got = series(bad)
        assert got.status_code == 422, got.text
        assert got.json()["detail"]["field"] == "match"
        assert "bad regular expression for pod" in got.json()["detail"]["reason"]
