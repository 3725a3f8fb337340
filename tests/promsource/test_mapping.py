"""The mapping config: the shipped file, label rules, scale and validation (no network)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from correlator.promsource.mapping import MappingError, load_mapping, parse_mapping

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "deploy" / "prometheus" / "causeline-mapping.yml"


def test_shipped_file_is_the_built_in_mapping():
    assert load_mapping(SHIPPED).rules == load_mapping().rules


def test_node_exporter_metrics_take_host_from_instance_without_port():
    rules = load_mapping().rules
    for name in (
        "node_cpu_utilization_percent",
        "node_memory_used_bytes",
        "node_disk_io_utilization_percent",
        "node_network_receive_bytes_per_second",
        "node_network_transmit_bytes_per_second",
    ):
        rule = rules[name]
        assert rule.convert_labels({"instance": "10.0.0.7:9100", "job": "node"}) == {
            "host": "10.0.0.7"
        }
        assert rule.convert_labels({"instance": "[::1]:9100"}) == {"host": "::1"}
    assert "node_cpu_seconds_total" in rules["node_cpu_utilization_percent"].query


def test_dcgm_labels_and_mib_to_bytes():
    rules = load_mapping().rules
    raw = {"gpu": "3", "Hostname": "gpu-node-2", "UUID": "GPU-x", "modelName": "H100"}
    assert rules["gpu_utilization_percent"].query == "DCGM_FI_DEV_GPU_UTIL"
    assert rules["gpu_utilization_percent"].convert_labels(raw) == {
        "gpu": "3",
        "host": "gpu-node-2",
    }
    assert rules["gpu_memory_used_bytes"].scale == 1024 * 1024


def test_passthrough_keeps_labels_but_job():
    rule = load_mapping().rules["model_latency_p99_ms"]
    assert rule.query == "model_latency_p99_ms"
    raw = {"__name__": "model_latency_p99_ms", "job": "m", "model": "a", "instance": "i-1"}
    assert rule.convert_labels(raw) == {"model": "a", "instance": "i-1"}


def test_keep_and_plain_string_rules():
    m = parse_mapping(
        {
            "max_points": 50,
            "metrics": {
                "model_ctr": "sum by (model) (rate(clicks_total[5m]))",
                "gpu_power_watts": {
                    "query": "p",
                    "keep": ["gpu"],
                    "labels": {"host": {"from": "node", "regex": "(.*)\\.corp"}},
                },
            },
        }
    )
    assert m.max_points == 50 and m.metrics == {"model_ctr", "gpu_power_watts"}
    assert m.rules["model_ctr"].convert_labels({"model": "x"}) == {}
    assert m.rules["gpu_power_watts"].convert_labels({"gpu": "0", "node": "n1.corp"}) == {
        "gpu": "0",
        "host": "n1",
    }


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"metrics": {"x": {"query": "q", "colour": 1}}}, "unknown field"),
        ({"metrics": {"x": {"labels": {}}}}, "needs a 'query'"),
        ({"metrics": {"x": {"query": "q", "labels": {"h": {"from": "a", "regex": "("}}}}}, "regex"),
        ({"metrics": {"x": "q"}, "passthrough": ["x"]}, "both"),
        ({"max_points": 1}, "max_points"),
        ({"metrics": {"bad-name": "q"}}, "not a metric name"),
        ({"metrics": {"x": {"query": "q", "scale": "big"}}}, "scale"),
    ],
)
def test_bad_mapping_names_the_field(doc, needle):
    with pytest.raises(MappingError, match=needle):
        parse_mapping(doc, "m.yml")


def test_unreadable_file_names_the_path(tmp_path):
    bad = tmp_path / "m.yml"
    bad.write_text("metrics: [unclosed")
    with pytest.raises(MappingError, match="m.yml"):
        load_mapping(bad)
    with pytest.raises(MappingError, match="missing.yml"):
        load_mapping(tmp_path / "missing.yml")
    assert yaml.safe_load(SHIPPED.read_text())["version"] == 1
