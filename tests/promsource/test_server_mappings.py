"""The shipped mappings of model servers' own metrics, read from a real Prometheus."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from correlator.bundle import Series
from correlator.promsource import load_mapping, make_source
from correlator.promsource.mapping import MappingError
from tests.promsource import servers

MAPPINGS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "mappings"
STEP = 15.0
END = (time.time() // 3600 - 1) * 3600  # whole hours in the past: promtool writes blocks
START = END - 1800
TS = np.arange(START, END + 1, STEP)


def _counter(name: str, labels: dict, per_second: float) -> Series:
    return Series(name, labels, TS, per_second * (TS - START))


def _gauge(name: str, labels: dict, value: float) -> Series:
    return Series(name, labels, TS, np.full(TS.size, value))


def _histogram(name: str, labels: dict, bounds: list[str], per_second: list[float]) -> list:
    return [
        _counter(f"{name}_bucket", {**labels, "le": le}, rate)
        for le, rate in zip(bounds, per_second, strict=True)
    ]


def _triton() -> list[Series]:
    m = {"model": "resnet", "version": "1", "instance": "10.0.0.5:8002", "job": "triton"}
    gpu = {"gpu_uuid": "GPU-abc", "instance": "10.0.0.5:8002", "job": "triton"}
    return [
        _counter("nv_inference_request_success", m, 10.0),
        _counter("nv_inference_request_failure", m, 0.5),
        _counter("nv_inference_count", m, 40.0),
        _counter("nv_inference_exec_count", m, 10.0),
        _counter("nv_inference_request_duration_us", m, 10.0 * 20_000),
        _counter("nv_inference_queue_duration_us", m, 10.0 * 5_000),
        _gauge("nv_inference_pending_request_count", m, 3.0),
        _gauge("nv_inference_request_summary_us", {**m, "quantile": "0.95"}, 30_000.0),
        _gauge("nv_gpu_utilization", gpu, 0.62),
        _gauge("nv_gpu_memory_used_bytes", gpu, 8e9),
        _gauge("nv_gpu_power_usage", gpu, 210.0),
    ]


def _vllm() -> list[Series]:
    m = {"model_name": "llama", "instance": "10.0.0.6:8000"}
    return [
        _counter("vllm:request_success_total", m, 5.0),
        _gauge("vllm:num_requests_waiting", m, 2.0),
        _gauge("vllm:num_requests_running", m, 8.0),
        *_histogram("vllm:e2e_request_latency_seconds", m, ["0.5", "1", "+Inf"], [1, 3, 5]),
        *_histogram("vllm:time_to_first_token_seconds", m, ["0.1", "0.25", "+Inf"], [2, 4, 5]),
        # an older vLLM: inter-token latency under its former name
        *_histogram("vllm:time_per_output_token_seconds", m, ["0.01", "+Inf"], [3, 5]),
        *_histogram("vllm:request_prompt_tokens", m, ["128", "+Inf"], [4, 5]),
    ]


def _opentelemetry() -> list[Series]:
    m = {"gen_ai_request_model": "gpt-x", "job": "chat"}
    return [
        _counter("gen_ai_server_request_duration_seconds_count", m, 4.0),
        _counter("gen_ai_server_request_duration_seconds_count", {**m, "error_type": "timeout"}, 1),
        *_histogram("gen_ai_server_request_duration_seconds", m, ["0.1", "1", "+Inf"], [1, 3, 4]),
        _gauge("hw_gpu_utilization_ratio", {"hw_id": "gpu0", "host_name": "node-a"}, 0.5),
    ]


CASES = {
    "triton.yml": (
        _triton,
        {
            "model_requests_per_second": ({"model": "resnet", "version": "1"}, 10.5),
            "model_error_rate": ({"model": "resnet", "version": "1"}, 0.5 / 10.5),
            "model_batch_size_mean": ({"model": "resnet", "version": "1"}, 4.0),
            "model_queue_length": ({"model": "resnet", "version": "1"}, 3.0),
            "model_latency_mean_ms": ({"model": "resnet", "version": "1"}, 20.0),
            "model_queue_time_mean_ms": ({"model": "resnet", "version": "1"}, 5.0),
            "model_latency_p95_ms": ({"model": "resnet", "version": "1"}, 30.0),
            "gpu_utilization_percent": ({"gpu": "GPU-abc", "host": "10.0.0.5"}, 62.0),
            "gpu_memory_used_bytes": ({"gpu": "GPU-abc", "host": "10.0.0.5"}, 8e9),
            "gpu_power_watts": ({"gpu": "GPU-abc", "host": "10.0.0.5"}, 210.0),
        },
    ),
    "vllm.yml": (
        _vllm,
        {
            "model_requests_per_second": ({"model": "llama"}, 5.0),
            "model_queue_length": ({"model": "llama"}, 2.0),
            "model_batch_size_mean": ({"model": "llama"}, 8.0),
            # rank 2.5 of 5 falls in (0.5, 1] holding ranks 1..3: 0.5 + 1.5 / 2 * 0.5 s
            "model_latency_p50_ms": ({"model": "llama"}, 875.0),
            "model_time_to_first_token_p50_ms": ({"model": "llama"}, 137.5),
            "model_inter_token_latency_p50_ms": ({"model": "llama"}, 2.5 / 3 * 10),
        },
    ),
    "opentelemetry.yml": (
        _opentelemetry,
        {
            "model_requests_per_second": ({"model": "gpt-x"}, 5.0),
            "model_error_rate": ({"model": "gpt-x"}, 0.2),
            "model_latency_p50_ms": ({"model": "gpt-x"}, 550.0),
            "gpu_utilization_percent": ({"gpu": "gpu0", "host": "node-a"}, 50.0),
        },
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_model_servers_metrics_read_as_the_vocabulary(name, tmp_path):
    make, expected = CASES[name]
    mapping = load_mapping(MAPPINGS / name)
    assert "node_cpu_utilization_percent" in mapping.metrics  # it extends the built-in one
    ctx, url = servers.prometheus_backfilled(tmp_path, make())
    with ctx:
        found = make_source(url, mapping, step=STEP, timeout=10, retries=2).read(
            names=sorted(expected), start=START + 300, end=END - 60
        )
    got = {s.name: s for s in found}
    for metric, (labels, value) in expected.items():
        assert metric in got, f"{name}: no {metric}"
        assert got[metric].labels == labels, metric
        assert got[metric].values.size >= 60, metric  # 25 min at 15 s
        np.testing.assert_allclose(got[metric].values, value, rtol=1e-6, err_msg=metric)


def test_vllm_prompt_lengths_keep_their_buckets(tmp_path):
    ctx, url = servers.prometheus_backfilled(tmp_path, _vllm())
    with ctx:
        found = make_source(url, load_mapping(MAPPINGS / "vllm.yml"), step=STEP).read(
            names=["model_input_length_bucket"], start=START + 300, end=END - 60
        )
    assert sorted(s.labels["le"] for s in found) == ["+Inf", "128"]
    assert all(s.labels["model"] == "llama" for s in found)


def test_a_mapping_extends_another_and_replaces_its_rules(tmp_path):
    base = tmp_path / "base.yml"
    base.write_text("version: 1\nextends: built-in\nmetrics:\n  gpu_power_watts: my_watts\n")
    child = tmp_path / "child.yml"
    child.write_text("version: 1\nextends: base.yml\nstep_seconds: 5\npassthrough: [my_metric]\n")
    mapping = load_mapping(child)
    assert mapping.rules["gpu_power_watts"].query == "my_watts"
    assert mapping.rules["my_metric"].keep_all
    assert (
        mapping.rules["node_memory_used_bytes"].query
        == load_mapping().rules["node_memory_used_bytes"].query
    )
    assert mapping.step_seconds == 5 and mapping.max_points == load_mapping().max_points


@pytest.mark.parametrize(
    ("extends", "needle"),
    [("self.yml", "a cycle"), (3, "give 'built-in'"), ("missing.yml", "cannot read")],
)
def test_a_bad_extends_names_the_file_and_the_reason(tmp_path, extends, needle):
    path = tmp_path / "self.yml"
    path.write_text(f"version: 1\nextends: {extends}\n")
    with pytest.raises(MappingError, match=needle) as info:
        load_mapping(path)
    assert str(tmp_path) in str(info.value)


def test_a_long_chain_of_extends_is_refused(tmp_path):
    for i in range(6):
        (tmp_path / f"m{i}.yml").write_text(f"version: 1\nextends: m{i + 1}.yml\n")
    (tmp_path / "m6.yml").write_text("version: 1\n")
    with pytest.raises(MappingError, match="more than 4 files"):
        load_mapping(tmp_path / "m0.yml")
