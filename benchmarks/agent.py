"""Benchmark the collector agent: CPU seconds per minute, peak RSS, probe cost per request.

Runs the real agent loop (host source via psutil, 8 GPUs from a recorded NVML
fake, an in-process probe fed 2,000 requests/s, batching, gzip, spool and
HTTP delivery to a sink in another process) and reports:

- agent CPU seconds per minute of wall time (the feeding thread's own CPU
  is measured apart and subtracted: it stands for the model server's work),
- peak RSS of the process,
- the probe's cost per recorded request in microseconds.

    .venv/bin/python benchmarks/agent.py --seconds 60 --interval 1

On a GPU machine, ``--gpus real`` reads the host's GPUs through the real NVML in place of
the recording, and the time of one reading of every GPU is printed for both.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SINK = r"""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"series": 0, "samples": 0, "inserted": 0, "events": 0}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def probe_cost(n: int = 100_000, repeat: int = 5) -> tuple[float, float]:
    """Return µs per request through ``with probe.request()`` and through ``record()``."""
    from collector.probe import Probe

    probe = Probe(model="bench", max_buffered=2 * n)

    def one():
        with probe.request(input_length=137) as r:
            r.score = 0.42

    def two():
        probe.record(12.5, input_length=137, score=0.42)

    best = {}
    for fn in (one, two):
        runs = []
        for _ in range(repeat):
            runs.append(timeit.timeit(fn, number=n) / n * 1e6)
            probe.sample()  # the agent folds the buffer between windows
        best[fn] = min(runs)
    return best[one], best[two]


def feed(probe, rate: int, stop: threading.Event, cpu: list) -> None:
    """Record ``rate`` requests per second until ``stop``; put own CPU seconds in ``cpu``."""
    start = time.thread_time()
    step = rate // 100
    next_at = time.monotonic()
    i = 0
    while not stop.is_set():
        for _ in range(step):
            i += 1
            with probe.request(input_length=(i * 37) % 3000) as r:
                r.score = (i % 100) / 100
        next_at += 0.01
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    cpu.append(time.thread_time() - start)


def gpu_source(gpus: str, host: str):
    """Return the GPU source: the 8-GPU recording, or the host's GPUs through real NVML."""
    from collector.sources.gpu import GpuSource

    if gpus == "real":
        return GpuSource(host=host)
    from tests.collector.fake_nvml import FakeNvml

    return GpuSource(FakeNvml("a100x8.json"), host=host)


def reading_cost(gpus: str, n: int = 200) -> tuple[float, int]:
    """Return milliseconds per reading of every GPU (best of 5 runs of ``n``) and their count."""
    source = gpu_source(gpus, "bench")
    try:
        count = len({s.labels["gpu"] for s in source.sample().samples if s.name == "gpu_up"})
        best = min(timeit.timeit(source.sample, number=n) / n for _ in range(5))
    finally:
        source.close()
    return best * 1e3, count


def run_agent(seconds: float, interval: float, rate: int, gpus: str = "recorded") -> dict:
    """Run the agent for ``seconds`` and return its CPU and memory figures."""
    from collector.agent import Agent
    from collector.batcher import Batcher
    from collector.probe import Probe
    from collector.shipper import Shipper
    from collector.sources.host import HostSource
    from collector.spool import Spool

    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    port = int(sink.stdout.readline())
    probe = Probe(model="bench", instance="i-1")
    with tempfile.TemporaryDirectory() as spool_dir:
        spool = Spool(spool_dir)
        shipper = Shipper(spool, server=f"http://127.0.0.1:{port}", token="bench")
        sources = [
            HostSource(host="bench"),
            gpu_source(gpus, "bench"),
            probe,
        ]
        agent = Agent(
            sources,
            host="bench",
            interval=interval,
            spool=spool,
            shipper=shipper,
            batcher=Batcher(max_age=max(interval, 10.0)),
        )
        stop, feeder_cpu = threading.Event(), []
        feeder = threading.Thread(target=feed, args=(probe, rate, stop, feeder_cpu))
        runner = threading.Thread(target=agent.run)
        feeder.start()
        time.sleep(0.5)
        cpu0, wall0 = os.times(), time.monotonic()
        runner.start()
        time.sleep(seconds)
        agent.stop()
        runner.join()
        cpu1, wall1 = os.times(), time.monotonic()
        stop.set()
        feeder.join()
        sent = spool.health.counters["samples_sent"]
    sink.terminate()
    sink.wait()
    wall = wall1 - wall0
    process_cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    feeder_share = feeder_cpu[0] * wall / (wall + 0.5)  # the feeder ran 0.5 s longer
    agent_cpu = max(0.0, process_cpu - feeder_share)
    return {
        "interval": interval,
        "wall_s": wall,
        "samples_sent": sent,
        "agent_cpu_s_per_min": agent_cpu / wall * 60,
        "agent_core_percent": agent_cpu / wall * 100,
        "feeder_cpu_s_per_min": feeder_share / wall * 60,
    }


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="run time per interval")
    parser.add_argument(
        "--interval",
        type=float,
        action="append",
        help="sampling interval(s) in seconds (default: 1 and 10)",
    )
    parser.add_argument("--rate", type=int, default=2000, help="probe requests per second")
    parser.add_argument(
        "--gpus",
        choices=("recorded", "real"),
        default="recorded",
        help="the 8-GPU NVML recording (default) or this host's GPUs through real NVML",
    )
    args = parser.parse_args()
    for kind in ("recorded", "real") if args.gpus == "real" else ("recorded",):
        ms, count = reading_cost(kind)
        print(f"one reading of {count} GPU(s), {kind} NVML: {ms:.3f} ms")
    gpus = "8 GPUs" if args.gpus == "recorded" else "this host's GPUs"
    for interval in args.interval or [1.0, 10.0]:
        r = run_agent(args.seconds, interval, args.rate, args.gpus)
        print(
            f"agent @ {interval:g}s interval, {gpus} + host + probe at {args.rate} req/s: "
            f"{r['agent_cpu_s_per_min']:.3f} CPU s/min ({r['agent_core_percent']:.2f}% of "
            f"one core), {r['samples_sent']} samples sent in {r['wall_s']:.0f}s"
        )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the agent process: {rss_mb:.1f} MB")
    with_cm, rec = probe_cost()
    print(f"probe: {with_cm:.2f} us/request (with probe.request()), {rec:.2f} us (record())")
    return 0


if __name__ == "__main__":
    sys.exit(main())
