"""Agent settings layering and the ``causeline agent`` command line."""

from __future__ import annotations

import json

import httpx
import pytest

from causeline.cli import build_parser, main
from collector.config import ConfigError, load_config, parse_duration
from collector.exporter import serve_metrics
from collector.reading import Reading


def test_durations():
    assert parse_duration("10s") == 10 and parse_duration("500ms") == 0.5
    assert parse_duration("5m") == 300 and parse_duration(2) == 2.0
    with pytest.raises(ConfigError, match="not a duration"):
        parse_duration("ten")


def test_layers_file_then_env_then_flags(tmp_path):
    toml = tmp_path / "agent.toml"
    toml.write_text(
        '[agent]\nserver = "http://file:1"\ninterval = "30s"\ntoken = "from-file"\n'
        'sources = ["host"]\n[[agent.scrape]]\nurl = "http://t:8002/metrics"\n'
        'flavor = "triton"\n'
    )
    env = {
        "CAUSELINE_AGENT_INTERVAL": "5s",
        "CAUSELINE_AGENT_TOKEN": "from-env",
        "CAUSELINE_AGENT_SPOOL_MAX_BYTES": "1000",
    }
    config = load_config(
        file=str(toml), env=env, overrides={"token": "from-flag", "interval": None}
    )
    assert config.server == "http://file:1"
    assert config.interval == 5.0
    assert config.token == "from-flag"
    assert config.spool_max_bytes == 1000
    assert config.sources == ["host"]
    assert config.scrape == [{"url": "http://t:8002/metrics", "flavor": "triton"}]
    as_json = tmp_path / "agent.json"
    as_json.write_text(json.dumps({"interval": 2, "checks": [{"url": "http://m", "model": "m"}]}))
    assert load_config(env={"CAUSELINE_AGENT_CONFIG": str(as_json)}).interval == 2.0


def test_unknown_setting_is_named(tmp_path):
    with pytest.raises(ConfigError, match="unknown setting 'intervall'"):
        load_config(env={"CAUSELINE_AGENT_INTERVALL": "1s"})


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("BATCH_MAX_SAMPLES", "0", "batch_max_samples must be positive, not 0"),
        ("SPOOL_MAX_BYTES", "-1", "spool_max_bytes must be positive, not -1"),
        ("RETRY_MAX", "0s", "retry_max must be positive, not 0.0"),
        ("FINGERPRINT_INTERVAL", "0", "fingerprint_interval must be positive"),
        ("INTERVAL", "0", "interval must be positive"),
        ("METRICS_PORT", "70000", "metrics_port must be 0 (off) to 65535, not 70000"),
    ],
)
def test_settings_out_of_range_are_named(variable, value, said):
    with pytest.raises(ConfigError) as err:
        load_config(env={"CAUSELINE_AGENT_" + variable: value})
    assert said in str(err.value)


def test_a_negative_number_in_the_file_is_named(tmp_path):
    conf = tmp_path / "agent.json"
    conf.write_text(json.dumps({"batch_max_age": -5}))  # the environment's text cannot be < 0
    with pytest.raises(ConfigError, match=r"batch_max_age must be 0 \(the default\) or more"):
        load_config(file=str(conf), env={})


def test_zero_turns_off_the_metrics_port_and_means_the_default_batch_age():
    config = load_config(
        env={"CAUSELINE_AGENT_METRICS_PORT": "0", "CAUSELINE_AGENT_BATCH_MAX_AGE": "0"}
    )
    assert config.metrics_port == 0 and config.batch_max_age == 0


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["agent", "--help"])
    assert "causeline agent --once --print" in capsys.readouterr().out


def test_once_print_shows_every_source(capsys, tmp_path):
    pods = tmp_path / "pods" / "default_ranker-7d9f_0a1b2c" / "server"
    pods.mkdir(parents=True)
    for n in ("0.log", "1.log", "2.log.20241125-0800.gz"):
        (pods / n).write_text("")
    config = tmp_path / "agent.toml"
    config.write_text(f'pod_log_root = "{tmp_path / "pods"}"\ninterval = "100ms"\n')
    code = main(
        [
            "agent",
            "--once",
            "--print",
            "--host",
            "node-a",
            "--config",
            str(config),
            "--sources",
            "host,gpu,restarts",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert 'node_memory_used_bytes{host="node-a"}' in out
    assert 'node_cpu_utilization_percent{host="node-a"}' in out
    assert (
        'container_restarts_total{container="server",host="node-a",instance="ranker-7d9f",'
        'namespace="default"} 2.0'
    ) in out


def test_agent_needs_server_and_token(capsys, tmp_path):
    code = main(["agent", "--once", "--sources", "host", "--spool-dir", str(tmp_path)])
    assert code == 2 and "--server and --token" in capsys.readouterr().err


def test_metrics_endpoint_serves_the_latest_reading(port):
    reading = Reading()
    reading.add("gpu_utilization_percent", 35.0, {"host": "h", "gpu": "0"})
    reading.add("node_network_receive_bytes_per_second", 5.0, {"host": "h"})
    reading.add("node_network_receive_bytes_per_second", 4.0, {"host": "h", "device": "eth0"})
    server, _ = serve_metrics(lambda: reading, port=port, addr="127.0.0.1")
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
    finally:
        server.shutdown()
    assert 'gpu_utilization_percent{gpu="0",host="h"} 35.0' in text
    assert 'node_network_receive_bytes_per_second{device="eth0",host="h"} 4.0' in text
