"""Push throughput: remote write and OTLP beside the native ingest, same data, one run.

One ``causeline serve`` per endpoint, each on a fresh SQLite file, receives the same samples
(``--series`` series x ``--points`` points, 15 s apart) in requests of ``--steps`` time steps
of every series, from ``--clients`` concurrent clients. Bodies are encoded before the clock
starts, as the senders would have them: /api/v1/ingest gets gzip JSON (the agent), /api/v1/write
snappy protobuf with one entry per sample (as Prometheus sends), /v1/metrics gzip protobuf
gauges (as the OpenTelemetry Collector sends). It prints samples/s and server CPU per sample.

    python benchmarks/remote_write.py
    python benchmarks/remote_write.py --series 200 --points 1000 --steps 10 --clients 4
"""

from __future__ import annotations

import argparse
import gzip
import os
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cramjam
import httpx
import orjson
import psutil
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from correlator.receivers.remote_pb2 import WriteRequest  # noqa: E402


def _labels(sid: int) -> tuple[str, dict[str, str]]:
    return f"bench_metric_{sid % 10}", {"host": f"node-{sid // 10}"}


def _value(sid: int, k: int) -> float:
    return float(sid * 1000 + k)


def ingest_body(n_series: int, steps: range, t0: float) -> bytes:
    """Return a gzip JSON batch of every series over ``steps``."""
    series = []
    for sid in range(n_series):
        name, labels = _labels(sid)
        series.append(
            {
                "name": name,
                "labels": labels,
                "timestamps": [t0 + 15.0 * k for k in steps],
                "values": [_value(sid, k) for k in steps],
            }
        )
    return gzip.compress(orjson.dumps({"series": series}))


def write_body(n_series: int, steps: range, t0: float) -> bytes:
    """Return a snappy WriteRequest, one TimeSeries entry per sample as Prometheus sends."""
    request = WriteRequest()
    for k in steps:
        for sid in range(n_series):
            name, labels = _labels(sid)
            entry = request.timeseries.add()
            entry.labels.add(name="__name__", value=name)
            entry.labels.add(name="host", value=labels["host"])
            entry.samples.add(value=_value(sid, k), timestamp=round((t0 + 15.0 * k) * 1000))
    return bytes(cramjam.snappy.compress_raw(request.SerializeToString()))


def otlp_body(n_series: int, steps: range, t0: float) -> bytes:
    """Return a gzip OTLP export: one gauge per metric name, a point per series and step."""
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    metrics = {}
    for sid in range(n_series):
        name, labels = _labels(sid)
        if name not in metrics:
            metrics[name] = scope.metrics.add(name=name)
        for k in steps:
            point = metrics[name].gauge.data_points.add()
            point.time_unix_nano = round((t0 + 15.0 * k) * 1e9)
            point.as_double = _value(sid, k)
            point.attributes.add(key="host").value.string_value = labels["host"]
    return gzip.compress(request.SerializeToString())


ENDPOINTS = {
    "/api/v1/ingest": (
        ingest_body,
        {"Content-Type": "application/json", "Content-Encoding": "gzip"},
    ),
    "/api/v1/write": (
        write_body,
        {
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "snappy",
            "X-Prometheus-Remote-Write-Version": "0.1.0",
        },
    ),
    "/v1/metrics": (
        otlp_body,
        {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
    ),
}


def free_port() -> int:
    """Return a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(*args: str, env: dict) -> str:
    """Run the causeline command and return its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "causeline.cli", *args],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def count_samples(db: Path) -> int:
    """Return the rows the store holds."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0]


def run(path: str, bodies: list[bytes], headers: dict, clients: int, folder: Path) -> dict:
    """Serve on a fresh SQLite file, send every body, return samples/s and CPU per sample."""
    db = folder / f"{path.strip('/').replace('/', '_')}.db"
    env = os.environ | {"CAUSELINE_DATABASE_URL": f"sqlite:///{db}"}
    cli("db", "upgrade", env=env)
    token = cli("token", "create", "bench", env=env)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "causeline.cli", "serve", "--port", str(port), "--no-alerts"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        headers = headers | {"Authorization": f"Bearer {token}"}

        def send(chunk: list[bytes]) -> None:
            with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
                for body in chunk:
                    client.post(path, content=body).raise_for_status()

        server = psutil.Process(proc.pid)
        cpu_before = sum(server.cpu_times()[:2])
        start = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(send, [bodies[i::clients] for i in range(clients)]))
        elapsed = time.perf_counter() - start
        cpu = sum(server.cpu_times()[:2]) - cpu_before
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    stored = count_samples(db)
    return {
        "stored": stored,
        "rate": stored / elapsed,
        "seconds": elapsed,
        "cpu_us": cpu / stored * 1e6,
    }


def main() -> None:
    """Parse arguments, run each endpoint on the same data and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=200)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument(
        "--steps", type=int, default=10, help="time steps of all series per request"
    )
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    batches = [
        range(k, min(k + args.steps, args.points)) for k in range(0, args.points, args.steps)
    ]
    total = args.series * args.points
    per = args.series * args.steps
    print(
        f"{args.series} series x {args.points} points = {total} samples; {per} per request; "
        f"{len(batches)} requests; {args.clients} clients; SQLite"
    )
    print(f"{'endpoint':<16} {'samples/s':>10} {'seconds':>8} {'CPU us/sample':>14} {'body kB':>8}")
    # From the next hour on: fresh samples, as senders' are (an hour that ended goes the late
    # path), that no rollup or compaction pass touches while the run lasts.
    t0 = (time.time() // 3600 + 1) * 3600
    with tempfile.TemporaryDirectory() as tmp:
        for path, (build, headers) in ENDPOINTS.items():
            bodies = [build(args.series, steps, t0) for steps in batches]
            result = run(path, bodies, headers, args.clients, Path(tmp))
            assert result["stored"] == total, (path, result)
            size = sum(map(len, bodies)) / len(bodies) / 1024
            print(
                f"{path:<16} {result['rate']:>10,.0f} {result['seconds']:>8.2f} "
                f"{result['cpu_us']:>14.1f} {size:>8.1f}"
            )


if __name__ == "__main__":
    main()
