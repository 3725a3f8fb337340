"""Scraping Triton, vLLM and TorchServe exposition texts served over real HTTP."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from collector.sources.scrape import ScrapeSource

VLLM = "meta-llama/Llama-3.1-8B-Instruct"


class Exposition:
    """A local HTTP server whose /metrics body the test sets."""

    def __init__(self, fixtures_dir):
        self.dir = fixtures_dir / "exposition"
        self.body = b""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                self.wfile.write(outer.body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/metrics"

    def serve(self, name):
        self.body = (self.dir / name).read_bytes()


@pytest.fixture
def exposition(fixtures_dir):
    server = Exposition(fixtures_dir)
    yield server
    server.server.shutdown()
    server.server.server_close()


class Ticks:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _get(reading, name, **labels):
    hits = [
        s.value
        for s in reading.samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(hits) <= 1, hits
    return hits[0] if hits else None


def test_triton_counters_become_rates_and_survive_a_reset(exposition):
    ticks = Ticks()
    source = ScrapeSource(exposition.url, flavor="triton", labels={"host": "h"}, monotonic=ticks)
    exposition.serve("triton-1.txt")
    first = source.sample()
    assert _get(first, "model_queue_length", model="click_rank_v3") == 3
    assert _get(first, "model_requests_per_second", model="click_rank_v3") is None
    assert _get(first, "model_scrape_up") == 1
    exposition.serve("triton-2.txt")
    ticks.t = 10.0
    second = source.sample()
    m = {"model": "click_rank_v3"}
    assert _get(second, "model_requests_per_second", **m) == pytest.approx(200.0)
    assert _get(second, "model_error_rate", **m) == pytest.approx(0.01)
    assert _get(second, "model_batch_size_mean", **m) == pytest.approx(8.0)
    assert _get(second, "model_latency_mean_ms", **m) == pytest.approx(25.0)
    assert _get(second, "model_queue_time_mean_ms", **m) == pytest.approx(5.0)
    assert _get(second, "model_queue_length", **m) == 37
    assert _get(second, "model_requests_per_second", model="resnet50") == pytest.approx(10.0)
    labels = next(s.labels for s in second.samples if s.name == "model_queue_length")
    assert labels == {"model": "click_rank_v3", "version": "1", "host": "h"}
    exposition.serve("triton-3-restarted.txt")  # server restarted: counters near zero
    ticks.t = 20.0
    third = source.sample()
    assert _get(third, "model_requests_per_second", **m) == pytest.approx(100.0)
    assert _get(third, "model_error_rate", **m) == pytest.approx(0.01)
    assert _get(third, "model_batch_size_mean", **m) == pytest.approx(8.0)
    assert all(s.value >= 0 for s in third.samples)


def test_vllm_histograms_to_percentiles_and_input_length_buckets(exposition):
    ticks = Ticks()
    source = ScrapeSource(exposition.url, flavor="vllm", labels={"host": "h"}, monotonic=ticks)
    exposition.serve("vllm-1.txt")
    first = source.sample()
    assert _get(first, "model_queue_length", model=VLLM) == 3
    assert _get(first, "model_batch_size_mean", model=VLLM) == 12
    exposition.serve("vllm-2.txt")
    ticks.t = 10.0
    second = source.sample()
    assert _get(second, "model_requests_per_second", model=VLLM) == pytest.approx(10.0)
    # window deltas: <=0.3:10 <=0.5:50 <=0.8:90 <=1.0:95 <=1.5:99 <=2.0:100
    assert _get(second, "model_latency_p50_ms", model=VLLM) == pytest.approx(500.0)
    assert _get(second, "model_latency_p95_ms", model=VLLM) == pytest.approx(1000.0)
    assert _get(second, "model_latency_p99_ms", model=VLLM) == pytest.approx(1500.0)
    # time to first token, window deltas <=0.02:10 <=0.04:50 <=0.1:90 <=0.25:100
    assert _get(second, "model_time_to_first_token_p50_ms", model=VLLM) == pytest.approx(40.0)
    assert _get(second, "model_time_to_first_token_p95_ms", model=VLLM) == pytest.approx(175.0)
    # inter-token latency, window deltas <=0.01:200 <=0.025:500 <=0.05:600
    assert _get(second, "model_inter_token_latency_p50_ms", model=VLLM) == pytest.approx(15.0)
    assert _get(first, "model_time_to_first_token_p50_ms", model=VLLM) is None  # no window yet
    b = {s.labels["le"]: s.value for s in second.samples if s.name == "model_input_length_bucket"}
    assert list(b) == ["16", "32", "64", "128", "256", "512", "1024", "2048", "+Inf"]
    assert b["+Inf"] == 500 and b["1024"] == 500 and b["2048"] == 500
    assert b["512"] == pytest.approx(490 + 10 * 12 / 500)  # interpolated inside (500, 1000]
    assert b["16"] == pytest.approx(50 * 6 / 10)  # inside (10, 20]: 0 + 50 * 0.6
    values = [b[k] for k in b]
    assert values == sorted(values)


def test_torchserve_from_the_documentation(exposition):
    ticks = Ticks()
    source = ScrapeSource(
        exposition.url, flavor="torchserve", labels={"instance": "ts-0"}, monotonic=ticks
    )
    exposition.serve("torchserve-1.txt")
    source.sample()
    exposition.serve("torchserve-2.txt")
    ticks.t = 10.0
    reading = source.sample()
    m = {"model": "resnet18", "instance": "ts-0"}
    assert _get(reading, "model_requests_per_second", **m) == pytest.approx(5.0)
    assert _get(reading, "model_latency_mean_ms", **m) == pytest.approx(80.0)
    assert _get(reading, "model_queue_time_mean_ms", **m) == pytest.approx(2.0)
    assert "version" not in next(s.labels for s in reading.samples if s.name.startswith("model_r"))


def test_unreachable_target_reports_down_and_rebases():
    source = ScrapeSource("http://127.0.0.1:9/metrics", flavor="triton", labels={}, timeout=1)
    reading = source.sample()
    assert _get(reading, "model_scrape_up") == 0


def test_unknown_flavor_is_refused():
    with pytest.raises(ValueError, match="unknown scrape flavor"):
        ScrapeSource("http://x", flavor="tgi", labels={})
