"""In-process probe: sketch percentiles vs numpy, exact histograms, threads, middleware."""

from __future__ import annotations

import asyncio
import random
import threading

import httpx
import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from collector.middleware import ProbeMiddleware
from collector.probe import Probe
from collector.requests import LATENCY_RELATIVE_ACCURACY


def _get(reading, name, **labels):
    hits = [
        s.value
        for s in reading.samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    return hits[0] if len(hits) == 1 else hits or None


class Ticks:
    """A manual monotonic clock."""

    def __init__(self, t=0.0):
        self.t = t

    def __call__(self):
        return self.t


def test_percentiles_within_the_sketch_error_of_numpy():
    rng = np.random.default_rng(7)
    latencies = rng.lognormal(mean=3.0, sigma=0.8, size=50_000)  # ms, long tail
    mono = Ticks()
    probe = Probe(model="m", instance="i-1", monotonic=mono)
    for v in latencies:
        probe.record(float(v))
    mono.t = 10.0
    reading = probe.sample()
    for q, name in (
        (0.5, "model_latency_p50_ms"),
        (0.95, "model_latency_p95_ms"),
        (0.99, "model_latency_p99_ms"),
    ):
        exact = np.quantile(latencies, q, method="lower")
        assert _get(reading, name) == pytest.approx(exact, rel=LATENCY_RELATIVE_ACCURACY * 1.01)
    assert _get(reading, "model_requests_per_second") == pytest.approx(5_000.0)


def test_sketches_merge_across_workers_not_averaged():
    fast, slow = Probe(model="m", instance="a"), Probe(model="m", instance="b")
    for _ in range(990):
        fast.record(10.0)
    for _ in range(10):
        slow.record(1000.0)
    fast.sample(), slow.sample()
    merged = fast.last_sketch
    merged.merge(slow.last_sketch)
    # the true p99.5 of the union is 1000 ms; the average of the two p99s would be ~505
    assert merged.get_quantile_value(0.995) == pytest.approx(1000.0, rel=0.01)
    assert merged.get_quantile_value(0.5) == pytest.approx(10.0, rel=0.01)


def test_histograms_are_exact_and_cumulative_across_windows():
    probe = Probe(model="m")
    lengths = [1, 16, 17, 100, 128, 129, 2048, 2049, 5000]
    scores = [0.0, 0.1, 0.15, 0.5, 0.95, 1.0]
    for n in lengths:
        with probe.request(input_length=n):
            pass
    for s in scores:
        with probe.request() as r:
            r.score = s
    first = probe.sample()
    buckets = {
        s.labels["le"]: s.value for s in first.samples if s.name == "model_input_length_bucket"
    }
    assert buckets == {
        "16": 2,
        "32": 3,
        "64": 3,
        "128": 5,
        "256": 6,
        "512": 6,
        "1024": 6,
        "2048": 7,
        "+Inf": 9,
    }
    scores_b = {s.labels["le"]: s.value for s in first.samples if s.name == "model_score_bucket"}
    assert scores_b["0.1"] == 2 and scores_b["0.2"] == 3 and scores_b["0.5"] == 4
    assert scores_b["0.9"] == 4 and scores_b["1.0"] == 6 and scores_b["+Inf"] == 6
    assert _get(first, "model_input_length_count") == 9
    assert _get(first, "model_input_length_sum") == sum(lengths)
    with probe.request(input_length=20):
        pass
    second = probe.sample()
    again = {
        s.labels["le"]: s.value for s in second.samples if s.name == "model_input_length_bucket"
    }
    assert again["32"] == 4 and again["+Inf"] == 10  # counters keep counting


def test_statuses_rates_batch_and_queue_hooks():
    probe = Probe(model="m", version="3.3.0")
    for status in ["ok"] * 6 + ["error", "timeout", "fallback", "fallback"]:
        probe.record(5.0, status=status)
    with pytest.raises(ValueError), probe.request():
        raise ValueError("boom")
    with pytest.raises(TimeoutError), probe.request():
        raise TimeoutError
    for size in (4, 8, 12):
        probe.observe_batch(size)
    probe.queue_length_hook(lambda: 17)
    reading = probe.sample()
    assert _get(reading, "model_error_rate") == pytest.approx(2 / 12)
    assert _get(reading, "model_timeout_rate") == pytest.approx(2 / 12)
    assert _get(reading, "model_fallback_rate") == pytest.approx(2 / 12)
    assert _get(reading, "model_batch_size_mean") == 8
    assert _get(reading, "model_queue_length") == 17
    assert _get(reading, "model_requests_total", status="error") == 2
    assert all(s.labels["version"] == "3.3.0" for s in reading.samples)


def test_many_threads_lose_nothing():
    probe = Probe(model="m")
    n_threads, per_thread = 16, 5_000
    taken = []

    def worker(seed):
        rnd = random.Random(seed)
        for _ in range(per_thread):
            with probe.request(input_length=rnd.randint(1, 4000)) as r:
                r.score = rnd.random()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):  # sample while recording goes on
        taken.append(probe.sample())
    for t in threads:
        t.join()
    taken.append(probe.sample())
    total = n_threads * per_thread
    assert _get(taken[-1], "model_input_length_count") == total
    assert _get(taken[-1], "model_score_bucket", le="+Inf") == total
    assert _get(taken[-1], "model_requests_total", status="ok") == total


def test_middleware_times_requests_and_lets_handlers_set_score():
    probe = Probe(model="m", instance="i-1")

    async def predict(request):
        handle = request.state.causeline
        handle.input_length = 42
        handle.score = 0.75
        return JSONResponse({"score": 0.75})

    async def broken(request):
        return JSONResponse({"detail": "down"}, status_code=503)

    async def slow(request):
        return JSONResponse({}, status_code=504)

    app = ProbeMiddleware(
        Starlette(
            routes=[
                Route("/predict", predict, methods=["POST"]),
                Route("/broken", broken),
                Route("/slow", slow),
            ]
        ),
        probe,
    )

    async def drive():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for _ in range(3):
                assert (await client.post("/predict", json={})).status_code == 200
            assert (await client.get("/broken")).status_code == 503
            assert (await client.get("/slow")).status_code == 504

    asyncio.run(drive())
    reading = probe.sample()
    assert _get(reading, "model_requests_total", status="ok") == 3
    assert _get(reading, "model_requests_total", status="error") == 1
    assert _get(reading, "model_requests_total", status="timeout") == 1
    assert _get(reading, "model_input_length_bucket", le="64") == 3
    assert _get(reading, "model_score_bucket", le="0.8") == 3
    assert _get(reading, "model_latency_p99_ms") > 0
