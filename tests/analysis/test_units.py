"""Reading what a metric measures from its name's unit words."""

from __future__ import annotations

import numpy as np
import pytest

from correlator.analysis.units import (
    harm_direction,
    harm_of_labels,
    latency_share,
    over_interval,
    seconds_per_unit,
    unit_step,
)


def test_the_unit_word_nearest_the_end_sets_the_step():
    assert unit_step("memory_usage_mebibytes") == 1.0
    assert unit_step("request_duration_seconds") == 1e-3
    assert unit_step("requests_total") == 0.0


@pytest.mark.parametrize(
    ("name", "way"),
    [
        ("latency_p99", 1),
        ("traces_span_metrics_duration_p90_seconds", 1),
        ("traces_service_graph_request_failed:increase1m", 1),
        ("model_error_rate", 1),
        ("container_restarts_total", 1),
        ("memory_usage_mebibytes", 1),
        ("model_queue_length", 1),
        ("api_response_time_seconds", 1),  # any latency or error kind (``metric_kind``)
        ("http_4xx_per_second", 1),
        ("availability_avg", -1),
        ("pod_success_rate_percent", -1),
        ("node_memory_free_bytes", -1),  # free memory hurts going down
        ("requests_sum", 0),  # traffic hurts either way
        ("cpu_usage_cores", 0),
        ("gpu_sm_clock_mhz", 0),
    ],
)
def test_the_way_a_metric_hurts_is_read_from_its_name(name, way):
    assert harm_direction(name) == way


@pytest.mark.parametrize(
    ("name", "over"),
    [
        ("log_lines:count1m", True),
        ("traces_span_metrics_calls:increase1m", True),
        ("job:http_requests:rate5m", True),
        ("instance:node_cpu:ratio", False),  # a recording rule of an instant
        ("traces_span_metrics_duration_p99_seconds", False),
        ("node_network_receive_bytes_per_second", False),
    ],
)
def test_a_recording_rule_over_a_range_is_read_from_its_name(name, over):
    assert over_interval(name) is over


def test_failures_are_read_from_a_log_level_or_span_status():
    assert harm_of_labels({"service": "a", "level": "error"}) == 1
    assert harm_of_labels({"service": "a", "status_code": "STATUS_CODE_ERROR"}) == 1
    assert harm_of_labels({"service": "a", "level": "info"}) == 0
    assert harm_of_labels({"service": "a"}) == 0


def test_a_latency_rise_is_weighed_as_a_share_of_the_slas_rise_in_seconds():
    names = ["call_latency_p99_ms", "db_duration_seconds", "cpu_usage_cores", "latency_avg"]
    rises = np.array([50.0, 0.002, 3.0, 7.0])
    share = latency_share(names, rises, "front_latency_p99_seconds", 0.5)
    # 50 ms of 500 ms; 2 ms of 500 ms; no latency; a latency without a unit is not comparable.
    assert share == pytest.approx([0.1, 0.004, 1.0, 1.0])
    assert seconds_per_unit("call_latency_p99_ms") == 1e-3
    assert seconds_per_unit("latency_avg") is None
    # An SLA on errors, or one that did not rise, weighs no latency down.
    assert (latency_share(names, rises, "error_rate", 0.5) == 1).all()
    assert (latency_share(names, rises, "front_latency_p99_seconds", 0.0) == 1).all()
