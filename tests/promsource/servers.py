"""Start real node-exporter, Prometheus and VictoriaMetrics on loopback for the tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port

NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"
PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
VICTORIA = "/usr/bin/victoria-metrics"


def need(binary: str) -> str:
    """Return the binary's path; skip without it, except in CI where it must be there."""
    path = binary if os.access(binary, os.X_OK) else shutil.which(Path(binary).name)
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{binary} is not installed (CI must run the Prometheus tests)")
    pytest.skip(f"{binary} is not installed")


def scrape_config(target: str) -> str:
    """Return a config scraping one node-exporter every second."""
    return (
        "global:\n  scrape_interval: 1s\n"
        "scrape_configs:\n  - job_name: node\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )


@contextlib.contextmanager
def running(
    args: list[str],
    log: Path,
    ready_url: str,
    timeout: float = 30.0,
    env: dict[str, str] | None = None,
):
    """Run a server (in ``env``, else this environment) until the block ends; wait until
    ``ready_url`` answers 200."""
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{args[0]} exited {proc.returncode}: {log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(ready_url, timeout=1.0).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{args[0]} not ready at {ready_url}: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def node_exporter(tmp: Path):
    """Start node-exporter with the cpu, memory, disk and network collectors."""
    port = free_port()
    args = [
        need(NODE_EXPORTER),
        f"--web.listen-address=127.0.0.1:{port}",
        "--collector.disable-defaults",
        "--collector.cpu",
        "--collector.meminfo",
        "--collector.diskstats",
        "--collector.netdev",
    ]
    url = f"http://127.0.0.1:{port}"
    return running(args, tmp / "node-exporter.log", f"{url}/metrics"), f"127.0.0.1:{port}"


def _prometheus(tmp: Path, config: str):
    """Start Prometheus with ``config`` and its storage in ``tmp / 'prom-data'``."""
    port = free_port()
    cfg = tmp / "prometheus.yml"
    cfg.write_text(config)
    args = [
        need(PROMETHEUS),
        f"--config.file={cfg}",
        f"--storage.tsdb.path={tmp / 'prom-data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    url = f"http://127.0.0.1:{port}"
    return running(args, tmp / "prometheus.log", f"{url}/-/ready"), url


def prometheus(tmp: Path, target: str):
    """Start Prometheus scraping ``target`` every second, with its own temp storage."""
    return _prometheus(tmp, scrape_config(target))


def victoria_metrics(tmp: Path, target: str | None):
    """Start VictoriaMetrics scraping ``target`` itself (-promscrape.config); None: no scraping."""
    port = free_port()
    args = [
        need(VICTORIA),
        f"-httpListenAddr=127.0.0.1:{port}",
        f"-storageDataPath={tmp / 'vm-data'}",
        "-search.latencyOffset=1s",
        "-search.disableCache",
        "-loggerLevel=WARN",
    ]
    if target is not None:
        cfg = tmp / "vm-scrape.yml"
        cfg.write_text(scrape_config(target))
        args.append(f"-promscrape.config={cfg}")
    url = f"http://127.0.0.1:{port}"
    return running(args, tmp / "victoria-metrics.log", f"{url}/health"), url


def _labels(labels: dict[str, str]) -> str:
    def quote(value: str) -> str:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    return "{" + ",".join(f'{k}="{quote(v)}"' for k, v in sorted(labels.items())) + "}"


def exposition(series, *, millis: bool) -> str:
    """Return series as exposition lines with timestamps (seconds, or milliseconds)."""
    scale = 1000 if millis else 1
    lines = []
    for s in series:
        head = f"{s.name}{_labels(s.labels)}"
        lines += [
            f"{head} {float(v)!r} {round(t * scale)}" for t, v in zip(s.ts, s.values, strict=True)
        ]
    return "\n".join(lines) + "\n"


def prometheus_backfilled(tmp: Path, series):
    """Start Prometheus serving only ``series``, written into TSDB blocks by promtool."""
    data = tmp / "prom-data"
    families: dict[str, list] = {}
    for s in series:
        families.setdefault(s.name, []).append(s)
    text = "".join(
        f"# TYPE {name} gauge\n" + exposition(members, millis=False)
        for name, members in families.items()
    )
    source = tmp / "backfill.om"
    source.write_text(text + "# EOF\n")
    done = subprocess.run(
        [need(PROMTOOL), "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return _prometheus(tmp, "global:\n  scrape_interval: 15s\n")


def import_into_victoria(url: str, series) -> None:
    """Write ``series`` through VictoriaMetrics' import API and make them searchable now."""
    body = exposition(series, millis=True)
    httpx.post(f"{url}/api/v1/import/prometheus", content=body, timeout=30).raise_for_status()
    httpx.get(f"{url}/internal/force_flush", timeout=30).raise_for_status()


def wait_for_samples(source, name: str, seconds: float, timeout: float = 40.0) -> None:
    """Wait until ``name`` has at least ``seconds`` worth of 1 s samples."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = time.time()
        found = source.read(names=[name], start=now - 300, end=now)
        if found and found[0].ts.size >= seconds:
            return
        time.sleep(1.0)
    raise AssertionError(f"{name}: fewer than {seconds} samples after {timeout} s")


@contextmanager
def holding(kind: str, tmp: Path, series) -> Iterator[str]:
    """Yield the URL of a real Prometheus (backfilled) or VictoriaMetrics holding ``series``."""
    if kind == "prometheus":
        ctx, url = prometheus_backfilled(tmp, series)
        with ctx:
            yield url
        return
    ctx, url = victoria_metrics(tmp, None)
    with ctx:
        import_into_victoria(url, series)
        yield url
