"""A real Prometheus (Debian package ``prometheus``) scrapes the agent's /metrics."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import httpx
import psutil
import pytest

from collector.agent import Agent
from collector.exporter import serve_metrics
from collector.sources.host import HostSource
from tests.helpers import free_port

pytestmark = pytest.mark.integration


@pytest.fixture
def prometheus_binary() -> str:
    path = shutil.which("prometheus")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("prometheus is not installed; CI needs the Debian package 'prometheus'")
        pytest.skip("prometheus binary absent (apt-get install prometheus); runs in CI")
    return path


def _query(base: str, promql: str) -> list:
    resp = httpx.get(f"{base}/api/v1/query", params={"query": promql}, timeout=5)
    resp.raise_for_status()
    return resp.json()["data"]["result"]


def test_prometheus_scrapes_the_agent(tmp_path, prometheus_binary):
    agent = Agent([HostSource(host="prom-test")], host="prom-test", interval=1.0)
    agent.step()
    agent_port, prom_port = free_port(), free_port()
    server, _ = serve_metrics(lambda: agent.latest, port=agent_port, addr="127.0.0.1")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: causeline-agent\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{agent_port}']\n"
    )
    log = open(tmp_path / "prometheus.log", "w")  # noqa: SIM115
    prom = subprocess.Popen(
        [
            prometheus_binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{prom_port}"
    try:
        deadline, up, total = time.monotonic() + 60, [], []
        while time.monotonic() < deadline:
            try:
                up = _query(base, 'up{job="causeline-agent"}')
                total = _query(base, 'node_memory_total_bytes{host="prom-test"}')
            except httpx.HTTPError:
                pass
            if up and total:
                break
            time.sleep(0.5)
    finally:
        prom.terminate()
        prom.wait(20)
        log.close()
        server.shutdown()
    assert up, (tmp_path / "prometheus.log").read_text()[-3000:]
    assert up[0]["value"][1] == "1"
    assert float(total[0]["value"][1]) == psutil.virtual_memory().total
