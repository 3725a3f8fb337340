"""Real Prometheus, node-exporter and VictoriaMetrics on loopback: reads and a breach."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

from causeline.cli import main
from correlator.bundle import read_bundle
from correlator.promsource import PrometheusReader, PromSourceError, load_mapping, make_source
from correlator.promsource.mapping import parse_mapping
from tests.promsource import servers

NODE_METRICS = (
    "node_cpu_utilization_percent",
    "node_memory_used_bytes",
    "node_disk_io_utilization_percent",
    "node_network_receive_bytes_per_second",
    "node_network_transmit_bytes_per_second",
)
GIB = 1024**3
# Holds 2 GiB (every page written) for a bounded time, then exits.
HOG = (
    "import sys,time; b=bytearray(b'\\x01')*(2*1024**3); print('held', flush=True); "
    "time.sleep(float(sys.argv[1]))"
)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("node")
    ctx, target = servers.node_exporter(tmp)
    with ctx:
        yield target


@pytest.fixture(scope="module")
def prom(node, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prom")
    ctx, url = servers.prometheus(tmp, node)
    with ctx:
        yield url


@pytest.fixture(scope="module")
def victoria(node, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vm")
    ctx, url = servers.victoria_metrics(tmp, node)
    with ctx:
        yield url


def _check_node_series(url: str, host: str) -> None:
    source = make_source(url, step=1.0, timeout=10, retries=2)
    servers.wait_for_samples(source, "node_memory_used_bytes", 12)
    now = time.time()
    found = source.read(names=NODE_METRICS, start=now - 120, end=now)
    by_name = {s.name: s for s in found}
    for name in ("node_cpu_utilization_percent", "node_memory_used_bytes"):
        assert name in by_name, f"{url}: no {name}"
        s = by_name[name]
        assert s.labels == {"host": host}
        assert s.ts.size >= 3 and np.all(np.diff(s.ts) > 0)
    cpu = by_name["node_cpu_utilization_percent"].values
    assert np.all((cpu >= -1) & (cpu <= 101))
    mem = by_name["node_memory_used_bytes"].values
    assert np.all((mem > 16 * 1024**2) & (mem < 2**50))
    # Chunked: a 3-point limit splits the window, and the joined series is the same.
    small = dataclasses.replace(load_mapping(), max_points=3)
    window = {"names": ["node_memory_used_bytes"], "start": now - 25, "end": now - 5}
    chunked = make_source(url, small, step=1.0).read(**window)
    whole = make_source(url, step=1.0).read(**window)
    assert whole[0].ts.size >= 5
    np.testing.assert_array_equal(chunked[0].ts, whole[0].ts)
    np.testing.assert_array_equal(chunked[0].values, whole[0].values)


def test_prometheus_series_read_through_the_mapping(prom):
    _check_node_series(prom, "127.0.0.1")


def test_victoria_metrics_series_read_through_the_mapping(victoria):
    _check_node_series(victoria, "127.0.0.1")


def test_errors_name_url_and_query(prom):
    bad = parse_mapping({"metrics": {"node_memory_used_bytes": "rate(("}}, "bad")

    with pytest.raises(PromSourceError) as info:
        PrometheusReader(prom, bad, timeout=5, retries=0).read(
            ["node_memory_used_bytes"], time.time() - 10, time.time(), 1
        )
    assert prom in str(info.value) and "rate((" in str(info.value)


def _memory_baseline(url: str) -> float:
    source = make_source(url, step=1.0)
    servers.wait_for_samples(source, "node_memory_used_bytes", 15, timeout=60)
    now = time.time()
    found = source.read(names=["node_memory_used_bytes"], start=now - 15, end=now)
    return float(found[0].values.max())


def _first_over(url: str, threshold: float, since: float) -> float:
    """Return the time of the first scraped memory sample over the threshold after ``since``."""
    source = make_source(url, step=1.0)
    found = source.read(names=["node_memory_used_bytes"], start=since, end=time.time())
    times = [float(t) for s in found for t, v in zip(s.ts, s.values, strict=True) if v > threshold]
    assert times, "the memory load never showed in Prometheus"
    return min(times)


def test_breach_from_load_is_found_and_ranked_from_prometheus_alone(
    prom, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("CAUSELINE_HOME", str(tmp_path / "no-store"))
    monkeypatch.delenv("CAUSELINE_DATABASE_URL", raising=False)
    baseline = _memory_baseline(prom)
    sla = {
        "name": "node memory",
        "metric": "node_memory_used_bytes",
        "labels": {"host": "127.0.0.1"},
        "aggregate": "max",
        "op": ">",
        "threshold": baseline + 1 * GIB,
        "for_seconds": 5,
    }
    sla_file = tmp_path / "sla.json"
    sla_file.write_text(json.dumps(sla))
    spawned = time.time()  # the hog may fill memory, and be scraped, before it says so
    with subprocess.Popen([sys.executable, "-c", HOG, "20"], stdout=subprocess.PIPE) as hog:
        try:
            assert hog.stdout.readline().strip() == b"held"
            load_start = time.time()  # the load is in effect from here
            assert hog.wait(timeout=60) == 0
        finally:
            if hog.poll() is None:
                hog.kill()
    time.sleep(3.0)
    at = load_start + 12
    argv = ["--prometheus", prom, "--sla-file", str(sla_file), "--step", "1", "--before", "120"]
    assert main(["analyze", *argv, "--at", str(at)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["sla"] == "node memory"
    # The breach starts once the value has stayed over the threshold for for_seconds (5 s),
    # counted from the first scraped sample over it (allocation and scraping take their
    # own time on a busy machine, so the hog's start is only a bound).
    over = _first_over(prom, sla["threshold"], spawned - 5)
    assert spawned - 2 <= over <= load_start + 15, (over, spawned, load_start)
    lag = result["breach_start"] - over
    assert 5 - 2 <= lag <= 5 + 3, (result["breach_start"], over)
    assert isinstance(result["suspects"], list)
    for s in result["suspects"]:
        assert 0 <= s["score"] <= 1
    # export: a frozen copy of the same window
    out = tmp_path / "bundle"
    start, end = str(load_start - 60), str(time.time())
    # At the same 1 s step: the breach is then found within a step of the direct one.
    assert main(["export", str(out), "--from", start, "--to", end, *argv[:6]]) == 0
    assert "wrote" in capsys.readouterr().out
    bundle = read_bundle(out)
    names = {s.name for s in bundle.series}
    assert {"node_memory_used_bytes", "node_cpu_utilization_percent"} <= names
    assert bundle.sla["name"] == "node memory" and bundle.changes == []
    assert main(["analyze", str(out), "--at", str(at)]) == 0
    again = json.loads(capsys.readouterr().out)
    assert 5 - 2 <= again["breach_start"] - over <= 5 + 3


def test_query_range_route_reads_mapped_metrics_from_prometheus(prom, tmp_path):
    from fastapi.testclient import TestClient

    from correlator.api.app import create_app
    from correlator.settings import ServiceSettings

    settings = ServiceSettings(
        database_url=f"sqlite:///{tmp_path / 'c.db'}",
        prometheus_url=prom,
        prometheus_step_seconds=1,
    )
    selector = 'node_memory_used_bytes{host="127.0.0.1"}'
    now = time.time()
    with TestClient(create_app(settings)) as client:
        r = client.get(
            "/api/v1/query_range",
            params={"match": selector, "start": now - 30, "end": now},
        )
    assert r.status_code == 200, r.text
    result = r.json()["data"]["result"]
    assert result
    assert result[0]["metric"] == {"__name__": "node_memory_used_bytes", "host": "127.0.0.1"}
    assert httpx.get(f"{prom}/-/healthy").status_code == 200
