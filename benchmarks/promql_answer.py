"""Large PromQL answers through a real server: time, status, size and the server's memory.

Stores ``--series`` series ``x`` of 3 h at 15 s in SQLite, starts ``causeline serve`` on it
(from this checkout, or with ``--root`` from another one, e.g. a ``git worktree`` of an
older revision) and asks ``query_range`` at 11,000 steps for each query, first one at a
time and then ``--concurrent`` at once. It prints each answer's status, size and seconds,
and the server's resident memory before and at its peak (sampled every 20 ms).

    python benchmarks/promql_answer.py
    git worktree add /tmp/old a331bfa && python benchmarks/promql_answer.py --root /tmp/old
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest import free_port, wait_ready  # noqa: E402  (benchmarks/ingest.py)

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["x", "rate(x[1m])", "sum(rate(x[1m]))"]
HOURS = 3


def seed(url: str, series: int, end: int) -> None:
    """Store ``series`` series of ``HOURS`` hours at 15 s, ending at ``end``."""
    from collector.schema import Batch, SeriesBatch
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade
    from correlator.store.tsdb.ingest import store_batch

    engine = make_engine(url)
    upgrade(engine)
    ts = np.arange(end - HOURS * 3600, end, 15, dtype=float)
    rng = np.random.default_rng(1)
    for first in range(0, series, 50):
        batch = Batch(
            [
                SeriesBatch(
                    "x", {"i": str(i)}, ts.tolist(), np.cumsum(rng.random(ts.size)).tolist()
                )
                for i in range(first, min(first + 50, series))
            ]
        )
        store_batch(engine=engine, batch=batch)
    engine.dispose()


def rss_mb(pid: int) -> float:
    """Return a process' resident memory in MB."""
    return psutil.Process(pid).memory_info().rss / 2**20


class Peak:
    """Sample a process' resident memory in the background and keep its peak."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.stop = pid, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.02)

    def close(self) -> float:
        """Stop sampling and return the peak."""
        self.stop.set()
        self.thread.join()
        return self.peak


def ask(base: str, query: str, end: int) -> str:
    """Run one query_range at 11,000 steps and describe its answer."""
    start = end - HOURS * 3600
    params = {"query": query, "start": start, "end": end, "step": (end - start) / 10_999}
    began = time.perf_counter()
    resp = httpx.get(f"{base}/api/v1/query_range", params=params, timeout=600)
    took = time.perf_counter() - began
    kind = resp.json().get("errorType", "") if resp.status_code != 200 else ""
    return f"{resp.status_code} {kind:9s} {len(resp.content) / 1e6:7.1f} MB {took:6.1f} s"


def main() -> None:
    """Seed, serve and ask each query alone and concurrently."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--series", type=int, default=400)
    ap.add_argument("--concurrent", type=int, default=4)
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout whose server to run")
    args = ap.parse_args()
    end = int(time.time() // 3600 - 1) * 3600
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'answer.db'}"
        seed(url, args.series, end)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = os.environ | {"CAUSELINE_DATABASE_URL": url, "PYTHONPATH": str(args.root)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "causeline.cli", "serve", "--port", str(port)]
            + ["--no-alerts", "--no-evaluator"],
            env=env,
            cwd=args.root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_ready(base)
            print(f"server {args.root}, {args.series} series x 11,000 steps; idle RSS "
                  f"{rss_mb(proc.pid):.0f} MB")  # fmt: skip
            for query in QUERIES:
                peak = Peak(proc.pid)
                alone = ask(base, query, end)
                print(f"  {query:18s} alone:   {alone}   peak RSS {peak.close():5.0f} MB")
            for query in QUERIES:
                peak = Peak(proc.pid)
                with ThreadPoolExecutor(args.concurrent) as pool:
                    answers = list(pool.map(lambda q: ask(base, q, end), [query] * args.concurrent))
                print(f"  {query:18s} x{args.concurrent} at once, peak RSS {peak.close():5.0f} MB:")
                for line in answers:
                    print(f"      {line}")
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
