"""Faults end to end, against the real service: an outage and a killed agent lose nothing."""

from __future__ import annotations

import gzip
import json
import signal
import time

import pytest

from tests.collector.service_process import ServiceProcess, start_agent
from tests.helpers import free_port

pytestmark = pytest.mark.integration
OUTAGE_SECONDS = 30


def _wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def service(tmp_path):
    svc = ServiceProcess(tmp_path, free_port())
    yield svc
    svc.stop()


def test_thirty_second_outage_every_sample_arrives_once(service, tmp_path):
    sel = 'node_memory_used_bytes{host="e2e-outage"}'
    service.start()
    agent = start_agent(tmp_path, server=service.url, token=service.token, host="e2e-outage")
    try:
        _wait_for(lambda: len(service.timestamps(sel)) >= 3, 30, "first deliveries")
        service.stop()
        down_from = time.time()
        time.sleep(OUTAGE_SECONDS)
        down_to = time.time()
        assert list((tmp_path / "spool").glob("*.json.gz")), "nothing spooled during the outage"
        service.start()
        _wait_for(lambda: not list((tmp_path / "spool").glob("*.json.gz")), 30, "replay")
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(30)
    assert agent.returncode == 0, (tmp_path / "agent.log").read_text()[-3000:]
    ts = service.timestamps(sel)
    during = [t for t in ts if down_from <= t <= down_to]
    assert len(during) >= OUTAGE_SECONDS - 2, f"only {len(during)} samples of the outage arrived"
    gaps = [b - a for a, b in zip(ts, ts[1:], strict=False)]
    assert max(gaps) < 1.9, f"a sample is missing: gap of {max(gaps):.2f}s"
    assert len(ts) == len(set(ts)) and ts == sorted(ts)
    collected = service.timestamps('causeline_agent_samples_collected_total{host="e2e-outage"}')
    assert collected == ts  # one health sample per round too: no round lost or doubled


def test_agent_killed_while_spooling_delivers_after_restart(service, tmp_path):
    sel = 'node_memory_used_bytes{host="e2e-kill"}'
    agent = start_agent(tmp_path, server=service.url, token=service.token, host="e2e-kill")
    spool = tmp_path / "spool"
    try:
        _wait_for(lambda: len(list(spool.glob("*.json.gz"))) >= 4, 30, "spooled batches")
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait(10)
    spooled = set()
    for path in spool.glob("*.json.gz"):
        for s in json.loads(gzip.decompress(path.read_bytes()))["series"]:
            if s["name"] == "node_memory_used_bytes":
                spooled.update(s["timestamps"])
    assert len(spooled) >= 3
    service.start()
    agent = start_agent(tmp_path, server=service.url, token=service.token, host="e2e-kill")
    try:
        _wait_for(lambda: spooled <= set(service.timestamps(sel)), 30, "spooled samples")
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(30)
    stored = service.timestamps(sel)
    assert spooled <= set(stored) and len(stored) == len(set(stored))


def test_fingerprints_sent_then_diffed_by_host_name(service, capsys):
    from causeline.cli import main
    from collector.sources.fingerprint import FingerprintSource

    service.start()
    envs = {
        "train-1": {
            "gpu": {"driver_version": "535.129.03", "devices": [{"name": "A100"}]},
            "cpu": {"simd": ["avx", "avx2", "avx512f"]},
            "packages": {"torch": "2.3.1"},
        },
        "serve-1": {
            "gpu": {"driver_version": "470.223.02", "devices": [{"name": "Tesla T4"}]},
            "cpu": {"simd": ["avx"]},
            "packages": {"torch": "2.3.1"},
        },
    }
    for host, fp in envs.items():
        source = FingerprintSource(
            lambda fp=fp: fp, host=host, server=service.url, token=service.token, start_thread=False
        )
        assert source.check() is True
        assert source.sent_hash is not None
    assert (
        main(
            ["env", "diff", "train-1", "serve-1", "--server", service.url, "--token", service.token]
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "gpu.driver_version" in out and "535.129.03  ->  470.223.02" in out
    assert "cpu.simd" in out and "avx512f" in out and "torch" not in out
    assert main(["env", "diff", "train-1", "nowhere", "--server", service.url]) == 2
    assert "no fingerprint of host 'nowhere'" in capsys.readouterr().err
