"""The agent remote-writes into a real VictoriaMetrics; ``causeline analyze --prometheus`` finds
the latency breach there, and causeline's own store holds no sample of it.

One answer is lost on the way back (the request was stored, the agent sees a timeout), so
the agent sends that batch again: with ``-dedup.minScrapeInterval=1ms`` VictoriaMetrics
keeps one sample per series and millisecond, and every reading is there exactly once.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from causeline.cli import main
from collector.agent import Agent
from collector.batcher import Batcher
from collector.config import load_config
from collector.health import AgentHealth
from collector.reading import Reading
from collector.remote_write import RemoteWriteSender
from collector.shipper import Backoff
from collector.spool import Spool
from correlator.store.engine import make_engine
from correlator.store.migrate import upgrade
from tests.helpers import M1_LATENCY_SLA, count_rows, free_port
from tests.promsource import servers

pytestmark = pytest.mark.integration

STEP = 15.0
END = (time.time() // STEP) * STEP - 120  # the last reading, two minutes ago
START = END - 3600
BREACH = END - 20 * 60  # latency jumps here; the GPU saturated six minutes before
HOST = "gpu-node-1"
SLA = M1_LATENCY_SLA
# The agent's host and GPU series carry causeline's own names; the built-in mapping reads
# those metrics from node-exporter and DCGM names, so a fleet whose agents remote-write
# passes them through with the shipped mapping. model_* names pass through in the built-in.
AGENT_MAPPING = Path(__file__).parents[2] / "deploy/prometheus/mappings/causeline-agent.yml"


class Serving:
    """A model server and its GPU, read at the agent's (test-driven) clock."""

    name = "serving"

    def __init__(self, clock):
        self.clock = clock
        self.rng = random.Random(7)

    def sample(self) -> Reading:
        t, noise = self.clock.t, self.rng.gauss
        out = Reading()
        model = {"model": "m1", "instance": "i-1", "host": HOST}
        out.add("model_latency_p99_ms", (40.0 if t < BREACH else 180.0) + noise(0, 2), model)
        out.add("model_requests_per_second", 200.0 + noise(0, 3), model)
        gpu = 30.0 if t < BREACH - 360 else 95.0
        out.add("gpu_utilization_percent", gpu + noise(0, 1.5), {"host": HOST, "gpu": "0"})
        out.add("node_cpu_utilization_percent", 20.0 + noise(0, 1), {"host": HOST})
        return out

    def close(self) -> None:
        pass


class Clock:
    """The agent's wall and monotonic clocks, moved by the test."""

    def __init__(self, t: float):
        self.t = t

    def wall(self) -> float:
        return self.t

    def mono(self) -> float:
        return self.t - START


class LosesAnswer(httpx.BaseTransport):
    """Forward to the real server; the answer to request ``lose`` never comes back."""

    def __init__(self, lose: int):
        self.inner = httpx.HTTPTransport()
        self.lose = lose
        self.requests = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        response = self.inner.handle_request(request)
        if self.requests == self.lose:
            response.read()
            raise httpx.ReadTimeout("answer lost", request=request)
        return response

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def victoria(tmp_path):
    """Yield the URL of a real VictoriaMetrics that keeps one sample per series and ms."""
    port = free_port()
    args = [
        servers.need(servers.VICTORIA),
        f"-httpListenAddr=127.0.0.1:{port}",
        f"-storageDataPath={tmp_path / 'vm-data'}",
        "-dedup.minScrapeInterval=1ms",
        "-search.latencyOffset=1s",
        "-search.disableCache",
        "-loggerLevel=WARN",
    ]
    url = f"http://127.0.0.1:{port}"
    with servers.running(args, tmp_path / "victoria-metrics.log", f"{url}/health"):
        yield url


def _analyze(capsys, victoria: str, sla_file, *extra: str) -> dict:
    argv = ["--prometheus", victoria, "--sla-file", str(sla_file), "--step", str(STEP)]
    argv += ["--at", str(BREACH + 120), "--before", "3000", *extra]
    assert main(["analyze", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def _series_suspects(result: dict) -> dict[str, dict]:
    return {s["metric"]: s["labels"] for s in result["suspects"] if s.get("kind") == "series"}


def test_agent_remote_writes_to_victoria_metrics_and_analyze_finds_the_breach(
    victoria, tmp_path, capsys, monkeypatch
):
    db = make_engine(f"sqlite:///{tmp_path / 'causeline.db'}")  # a fresh store beside the TSDB
    upgrade(db)
    monkeypatch.setenv("CAUSELINE_DATABASE_URL", str(db.url))
    monkeypatch.delenv("CAUSELINE_PROMETHEUS_URL", raising=False)
    config = load_config(
        env={},
        overrides={
            "remote_write_url": f"{victoria}/api/v1/write",
            "spool_dir": str(tmp_path / "spool"),
            "host": HOST,
        },
    )
    assert config.server is None  # remote write only: nothing can reach causeline's ingest
    health, own = AgentHealth(), AgentHealth()
    health.add_destination("remote_write", own)
    spool = Spool(str(tmp_path / "spool" / "remote-write"), health=own)
    transport = LosesAnswer(lose=3)
    sender = RemoteWriteSender(
        spool,
        url=config.remote_write_url,
        client=httpx.Client(transport=transport, timeout=config.remote_write_timeout),
        backoff=Backoff(base=0.01, cap=0.05),
        health=own,
    )
    clock = Clock(START)
    agent = Agent(
        [Serving(clock)],
        host=HOST,
        interval=STEP,
        spool=spool,
        shipper=sender,
        batcher=Batcher(max_age=300.0),
        health=health,
        wallclock=clock.wall,
        monotonic=clock.mono,
    )
    readings = np.arange(START, END + 1, STEP)
    for t in readings:
        clock.t = float(t)
        agent.step()
        sender.send_one()  # the delivery thread's work, in step with the readings
    agent.flush()
    assert sender.drain(time.monotonic() + 60) is True and len(spool) == 0
    assert own.counters["batches_sent"] >= 12 and own.counters["send_failures"] == 1
    assert transport.requests == own.counters["batches_sent"] + 1  # one batch went twice
    sender.stop(flush_seconds=0)
    httpx.get(f"{victoria}/internal/force_flush", timeout=30).raise_for_status()

    exported = httpx.get(
        f"{victoria}/api/v1/export",
        params={"match[]": 'model_latency_p99_ms{model="m1"}', "start": START - 1, "end": END + 1},
        timeout=30,
    )
    stored = [json.loads(line) for line in exported.text.splitlines()]
    assert [s["metric"] for s in stored] == [
        {"__name__": "model_latency_p99_ms", "host": HOST, "instance": "i-1", "model": "m1"}
    ]
    assert stored[0]["timestamps"] == [round(t * 1000) for t in readings]  # each exactly once

    sla_file = tmp_path / "sla.json"
    sla_file.write_text(json.dumps(SLA))
    # The built-in mapping: model_* names pass through, so the breach is found.
    result = _analyze(capsys, victoria, sla_file)
    assert result["sla"] == SLA["name"]
    assert BREACH <= result["breach_start"] <= BREACH + 60 + 2 * STEP, result["breach_start"]
    # With the agent's host and GPU names passed through, the GPU ranks among the suspects.
    result = _analyze(capsys, victoria, sla_file, "--mapping", str(AGENT_MAPPING))
    assert BREACH <= result["breach_start"] <= BREACH + 60 + 2 * STEP
    suspects = _series_suspects(result)
    assert suspects.get("gpu_utilization_percent") == {"gpu": "0", "host": HOST}, suspects
    for table in ("samples", "sample_runs", "sample_chunks", "series"):
        assert count_rows(db, table) == 0, table
    db.dispose()
