"""The real Prometheus (Debian package) scrapes a page and remote-writes into causeline."""

from __future__ import annotations

import math
import subprocess
import time

import httpx
import pytest

from tests.helpers import free_port
from tests.promsource import servers
from tests.receivers.live import MetricsPage, Service

pytestmark = pytest.mark.integration

CONFIG = """
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: page
    static_configs:
      - targets: ['127.0.0.1:{page}']
remote_write:
  - url: {url}/api/v1/write
    authorization:
      credentials: {token}
    remote_timeout: 5s
    queue_config:
      batch_send_deadline: 500ms
      min_backoff: 100ms
      max_backoff: 500ms
    metadata_config:
      send_interval: 2s
"""


def _page(scrape: int, vanish_after: list[int]) -> str:
    """Return an exposition page: the counter counts scrapes; one series vanishes later."""
    lines = [
        "# TYPE rw_room_temperature_celsius gauge",
        'rw_room_temperature_celsius{room="a"} 21.5',
        'rw_room_temperature_celsius{room="b"} 19',
        "# TYPE rw_scrapes_total counter",
        f'rw_scrapes_total{{code="200"}} {scrape}',
    ]
    if not vanish_after or scrape <= vanish_after[0]:
        lines += ["# TYPE rw_vanishing gauge", "rw_vanishing 1"]
    return "\n".join(lines) + "\n"


def _stored(service: Service, match: str) -> list[float]:
    """Return a series' stored values, a staleness marker as NaN (a sample without value)."""
    result = service.series(match)
    assert len(result) <= 1, result
    return [float(v) for _, v in result[0]["values"]] if result else []


def _values(service: Service, match: str) -> list[float]:
    return [v for v in _stored(service, match) if not math.isnan(v)]


def _prom_count(base: str, promql: str, at: float | None = None) -> float | None:
    params = {"query": promql} if at is None else {"query": promql, "time": at}
    try:
        answer = httpx.get(f"{base}/api/v1/query", params=params, timeout=5)
    except httpx.HTTPError:  # not listening (yet)
        return None
    if answer.status_code != 200:  # starting: 503 "Service Unavailable" while replaying its WAL
        return None
    result = answer.json()["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def _prom_values(base: str, match: str) -> list[float]:
    """Return the values Prometheus itself holds for a series over the last 10 minutes."""
    answer = httpx.get(f"{base}/api/v1/query", params={"query": f"{match}[10m]"}, timeout=5)
    result = answer.json()["data"]["result"]
    return [float(v) for _, v in result[0]["values"]] if result else []


def _wait(what, check, timeout: float, log) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}: {log.read_text()[-3000:]}")


def test_prometheus_remote_write_arrives_once_across_restarts(tmp_path):
    prometheus_binary = servers.need(servers.PROMETHEUS)
    service = Service(tmp_path / "c.db", free_port())
    service.start()
    vanish: list[int] = []
    page_port, prom_port = free_port(), free_port()
    page = MetricsPage(page_port, lambda n: _page(n, vanish))
    (tmp_path / "prometheus.yml").write_text(
        CONFIG.format(page=page_port, url=service.url, token=service.token)
    )
    log = tmp_path / "prometheus.log"

    def start_prometheus() -> subprocess.Popen:
        with open(log, "a") as out:
            return subprocess.Popen(
                [
                    prometheus_binary,
                    f"--config.file={tmp_path / 'prometheus.yml'}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{prom_port}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    prom = start_prometheus()
    base = f"http://127.0.0.1:{prom_port}"
    counter = 'rw_scrapes_total{code="200",job="page"}'
    try:
        _wait("first samples", lambda: len(_values(service, counter)) >= 3, 20, log)
        service.stop()  # Prometheus keeps scraping and retries what it cannot send
        vanish.append(page.scrapes)  # the next scrape drops rw_vanishing: a stale marker
        time.sleep(4)
        service.start()
        time.sleep(2)
        prom.terminate()  # now Prometheus restarts: what it holds is sent once, not twice
        prom.wait(20)
        prom = start_prometheus()
        _wait("Prometheus back", lambda: _prom_count(base, "up") is not None, 20, log)
        time.sleep(2)
        page.close()  # no more samples; Prometheus marks the page's series stale

        watched = (counter, 'rw_vanishing{job="page"}', 'rw_room_temperature_celsius{room="a"}')

        def caught_up() -> bool:
            for match in watched:
                want = _prom_count(base, f"count_over_time({match}[10m])")
                if want is None or len(_values(service, match)) != want:
                    return False
            return True

        _wait("causeline to hold every sample Prometheus has", caught_up, 15, log)
        stored = _values(service, counter)
        # Every sample Prometheus holds, once and in order (the restart lost nothing). Its
        # own values are the yardstick: a scrape that timed out on a busy machine leaves a
        # step in the page's count that Prometheus never saw either.
        assert stored == _prom_values(base, counter)
        assert len(stored) >= 8
        assert all(b > a for a, b in zip(stored, stored[1:], strict=False))
        vanished = _stored(service, 'rw_vanishing{job="page"}')
        assert {v for v in vanished if not math.isnan(v)} == {1.0}
        assert math.isnan(vanished[-1])  # its staleness marker: kept as a sample without value

        # rw_vanishing left the page seconds ago: Prometheus no longer counts it, and neither
        # does causeline's PromQL (before, a remote-write series was counted 5 more minutes).
        now = time.time()
        for query in ("count(rw_vanishing)", "count(rw_room_temperature_celsius)"):
            want = _prom_count(base, query, now)
            assert _prom_count(service.url, query, now) == want, query
        assert _prom_count(base, "count(rw_vanishing)", now) is None
        room = service.series('rw_room_temperature_celsius{room="a"}')
        assert room[0]["metric"] == {
            "__name__": "rw_room_temperature_celsius",
            "room": "a",
            "job": "page",
            "instance": f"127.0.0.1:{page_port}",
        }
        assert set(_values(service, 'rw_room_temperature_celsius{room="a"}')) == {21.5}
        assert len(_values(service, 'rw_room_temperature_celsius{room="a"}')) == len(stored)
    finally:
        prom.terminate()
        prom.wait(20)
        service.stop()
        service.engine.dispose()
