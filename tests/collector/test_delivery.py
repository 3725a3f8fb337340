"""Batching, the on-disk spool, the shipper's retries and the agent loop."""

from __future__ import annotations

import gzip
import json
import logging
import threading
import time

import httpx
import pytest

from collector import shipper as shipping
from collector.agent import Agent
from collector.batcher import Batcher
from collector.health import AgentHealth
from collector.reading import Reading
from collector.schema import Batch, Event, SeriesBatch, parse_batch
from collector.shipper import Backoff, Shipper
from collector.spool import Spool
from tests.collector.sources import Counter


def _batch(n=10, name="m", t0=1_700_000_000.0, bid=None):
    return Batch(
        series=[
            SeriesBatch(
                name, {"host": "h"}, [t0 + i for i in range(n)], [float(i) for i in range(n)]
            )
        ],
        batch_id=bid,
    )


class Service:
    """An httpx MockTransport ingest endpoint whose answers the test scripts."""

    def __init__(self, answers=None):
        self.answers = list(answers or [])
        self.received: list[dict] = []
        self.headers: list = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        code = self.answers.pop(0) if self.answers else 200
        if code == "down":
            raise httpx.ConnectError("connection refused", request=request)
        self.headers.append(request.headers)
        body = json.loads(gzip.decompress(request.content))
        if code == 200:
            self.received.append(body)
            n = sum(len(s["timestamps"]) for s in body["series"])
            return httpx.Response(
                200, json={"series": len(body["series"]), "samples": n, "inserted": n, "events": 0}
            )
        if code == 422:
            return httpx.Response(
                422,
                json={"detail": {"field": "series[0].values[1]", "reason": "value must be finite"}},
            )
        return httpx.Response(code, json={"detail": "no"})


def _shipper(spool, service, **kw):
    client = httpx.Client(transport=httpx.MockTransport(service))
    return Shipper(
        spool,
        server="http://svc/",
        token="T",
        client=client,
        backoff=Backoff(base=0.001, cap=0.01),
        **kw,
    )


def test_batcher_cuts_by_size_and_by_age():
    b = Batcher(max_samples=5, max_age=10.0, new_id=lambda: "id")
    r = Reading()
    r.add("a", 1, {"x": "1"})
    r.add("b", 2, {})
    b.add(100.0, r, now=0.0)
    assert not b.due(5.0) and b.due(10.0)
    b.add(101.0, r, now=1.0)
    b.add(102.0, r, now=2.0)
    assert b.due(2.0)  # 6 samples
    batch = b.take()
    assert batch.batch_id == "id" and batch.sample_count == 6
    assert batch.series[0].timestamps == [100.0, 101.0, 102.0]
    assert b.take() is None
    parse_batch(batch.to_json())  # the wire contract holds


def test_spool_is_ordered_bounded_and_counts_drops(tmp_path, caplog):
    health = AgentHealth()
    one = len(gzip.compress(json.dumps(_batch(100).to_json(), separators=(",", ":")).encode()))
    spool = Spool(str(tmp_path), max_bytes=int(one * 3.5), health=health)
    entries = [spool.put(_batch(100, t0=1e9 + i * 1000, bid=str(i))) for i in range(5)]
    assert len(spool) == 3
    assert spool.oldest() == entries[2]
    assert health.counters["samples_dropped"] == 200
    assert "spool full" in caplog.text
    reopened = Spool(str(tmp_path), max_bytes=10**9)  # after a restart: same order, same seq
    assert reopened.oldest().name == entries[2].name
    assert reopened.put(_batch()).name > entries[4].name


def test_outage_then_recovery_delivers_everything_once_in_order(tmp_path):
    service = Service(["down", "down", 503, 500])
    spool = Spool(str(tmp_path))
    shipper = _shipper(spool, service)
    for i in range(4):
        spool.put(_batch(5, t0=1e9 + i * 10, bid=f"b{i}"))
    results = [shipper.send_one() for _ in range(4)]
    assert results == [False] * 4 and len(spool) == 4
    assert shipper.drain() is True
    assert [b["batch_id"] for b in service.received] == ["b0", "b1", "b2", "b3"]
    assert len(spool) == 0
    h = spool.health
    assert h.counters["samples_sent"] == 20 and h.counters["send_failures"] == 4
    assert h.last_success_ts > 0
    headers = service.headers[-1]
    assert headers["authorization"] == "Bearer T" and headers["content-encoding"] == "gzip"


def test_refused_batch_is_set_aside_not_retried_forever(tmp_path, caplog):
    service = Service([422])
    spool = Spool(str(tmp_path))
    spool.put(_batch(bid="bad"))
    spool.put(_batch(bid="good"))
    assert _shipper(spool, service).drain()
    assert [b["batch_id"] for b in service.received] == ["good"]
    assert (tmp_path / "rejected").exists() and len(list((tmp_path / "rejected").iterdir())) == 1
    assert "series[0].values[1]" in caplog.text


@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_token_keeps_the_data_says_so_and_stops_hammering(tmp_path, caplog, code):
    caplog.set_level(logging.WARNING)
    service = Service([code, code])
    spool = Spool(str(tmp_path))
    spool.put(_batch())
    health = AgentHealth()
    shipper = _shipper(spool, service, health=health)
    assert shipper.send_one() is False and len(spool) == 1
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert errors and "refused the token" in errors[0].getMessage()
    assert "causeline token create" in errors[0].getMessage()
    assert health.token_refused
    assert ("causeline_agent_token_refused", 1.0) in [
        (s.name, s.value) for s in health.reading({}).samples
    ]
    waits: list[float] = []
    shipper._stop.wait = lambda t: (waits.append(t), shipper._stop.set())[1]  # type: ignore
    shipper._run()  # the thread's loop: one failed send, then its wait
    assert waits == [shipping.REFUSED_RETRY_S]  # not the 0.5-30 s backoff of a passing fault
    assert shipper.send_one() is True and not health.token_refused  # a new token: delivered


def test_too_large_batch_is_split(tmp_path):
    service = Service([413])
    spool = Spool(str(tmp_path))
    big = Batch(
        series=[SeriesBatch(f"m{i}", {}, [1.0], [1.0]) for i in range(4)],
        events=[Event("e1", 1.0, "k", "s")],
        batch_id="big",
    )
    spool.put(big)
    spool.put(_batch(bid="next"))
    assert _shipper(spool, service).drain()
    assert [b["batch_id"] for b in service.received] == ["biga", "bigb", "next"]
    assert sum(len(b["series"]) for b in service.received[:2]) == 4


def test_too_large_batch_the_contract_refuses_is_set_aside_not_split(tmp_path, caplog):
    service = Service([413])
    spool = Spool(str(tmp_path))
    spool.put(
        Batch(
            series=[SeriesBatch("m", {"pod": f"p{i}\x1b[31m"}, [1.0], [1.0]) for i in range(4)],
            batch_id="escape",
        )
    )
    spool.put(_batch(bid="next"))
    assert _shipper(spool, service).drain()
    assert [b["batch_id"] for b in service.received] == ["next"]
    assert len(list((tmp_path / "rejected").iterdir())) == 1
    assert "series[0].labels.pod" in caplog.text


def test_backoff_grows_with_full_jitter_and_caps():
    top = Backoff(base=1.0, cap=30.0, rng=lambda: 1.0)
    assert [top.next_delay() for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    low = Backoff(base=1.0, cap=30.0, rng=lambda: 0.0)
    assert low.next_delay() == 0.5  # never a busy loop
    top.reset()
    assert top.next_delay() == 1


class Broken:
    name = "broken"

    def sample(self):
        raise RuntimeError("device vanished")

    def close(self):
        pass


def test_agent_isolates_a_failing_source_and_spools_batches(tmp_path):
    spool = Spool(str(tmp_path))
    clock = iter(range(100))
    agent = Agent(
        [Broken(), Counter()],
        host="h",
        interval=1.0,
        spool=spool,
        batcher=Batcher(max_age=3.0),
        monotonic=lambda: float(next(clock)),
    )
    for _ in range(4):
        agent.step()
    assert len(spool) == 1
    body = json.loads(gzip.decompress(spool.read(spool.oldest())))
    counter = next(s for s in body["series"] if s["name"] == "c")
    assert counter["values"] == [1, 2, 3, 4]
    errors = next(s for s in body["series"] if s["name"] == "causeline_agent_source_errors_total")
    assert errors["labels"] == {"host": "h", "source": "broken"} and errors["values"][-1] == 4


def test_agent_run_flushes_on_stop(tmp_path):
    service = Service()
    spool = Spool(str(tmp_path))
    agent = Agent(
        [Counter()],
        host="h",
        interval=0.05,
        spool=spool,
        shipper=_shipper(spool, service),
        batcher=Batcher(max_age=60),
    )
    t = threading.Thread(target=agent.run)
    t.start()
    time.sleep(0.3)
    agent.stop()
    t.join(10)
    assert not t.is_alive() and len(spool) == 0
    values = [
        v for b in service.received for s in b["series"] if s["name"] == "c" for v in s["values"]
    ]
    assert values == list(range(1, len(values) + 1)) and len(values) >= 3


@pytest.mark.parametrize("n", [1, 3])
def test_spool_survives_reopen_with_content(tmp_path, n):
    spool = Spool(str(tmp_path))
    for i in range(n):
        spool.put(_batch(bid=f"x{i}"))
    again = Spool(str(tmp_path))
    assert len(again) == n and again.health.spool_files == n


def test_agent_keeps_running_when_the_spool_cannot_be_written(tmp_path, caplog):
    class FullDisk(Spool):
        def put(self, batch, *, seq=None):
            raise OSError(28, "No space left on device")

    spool = FullDisk(str(tmp_path))
    agent = Agent([Counter()], host="h", interval=1.0, spool=spool, batcher=Batcher(max_age=0))
    agent.step()
    agent.step()
    assert spool.health.counters["samples_dropped"] > 0
    assert "No space left on device" in caplog.text
