"""Reading what a metric measures from its name's unit words."""

from __future__ import annotations

import pytest

from correlator.analysis.units import harm_direction, is_utilisation, unit_step


@pytest.mark.parametrize(
    ("name", "busy"),
    [
        ("node_cpu_utilization_percent", True),
        ("cpu_usage_rate_percent", True),
        ("gpu_utilization_percent", True),
        ("node_disk_io_utilization_percent", True),
        ("pod_success_rate_percent", False),  # 100 is healthy, not saturated
        ("error_rate_percent", False),
        ("cpu_usage_cores", False),  # no ceiling in the name
        ("utilization_percent_total", False),
    ],
)
def test_a_busy_share_in_percent_is_told_from_other_percentages(name, busy):
    assert is_utilisation(name) is busy


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
