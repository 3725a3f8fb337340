"""query_range latency of causeline against the Debian Prometheus, on the same samples.

Writes the samples of every metric that Node Exporter Full, the DCGM exporter's and vLLM's
dashboards read (``tests/promql/dashboards.py``, ``--nodes`` copies of each series under
other instances) for ``--hours`` hours at 15 s, into a causeline SQLite store served by
``causeline serve`` and into a Prometheus TSDB (promtool backfill). Then asks every
dashboard expression as a ``query_range`` over the last 10 minutes (15 s steps) and over
the whole span (60 s steps) of both, one at a time, and prints per window the median, 90th
percentile and slowest answer of each server and their ratio, and the slowest expressions.

    python benchmarks/promql_speed.py
    python benchmarks/promql_speed.py --nodes 20 --hours 6
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import free_port, wait_ready  # noqa: E402  (benchmarks/ingest.py)

from correlator.bundle import Series  # noqa: E402
from tests.promql import dashboards  # noqa: E402
from tests.promsource import servers  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def fleet(nodes: int, start: int, end: int) -> list[Series]:
    """Return the dashboards' samples, each series copied for ``nodes`` instances."""
    exprs = [e for found in dashboards.expressions().values() for e in found]
    base = dashboards.samples(exprs, start, end)
    out = {(s.name, tuple(sorted(s.labels.items()))): s for s in base}
    for n in range(2, nodes + 1):
        for s in base:
            if "instance" in s.labels:
                labels = {**s.labels, "instance": f"node{n}:9100"}
                copy = Series(s.name, labels, s.ts, s.values * (1 + n / 100))
                out.setdefault((s.name, tuple(sorted(labels.items()))), copy)
    return list(out.values())


def store(url: str, series: list[Series]) -> None:
    """Write the series into a causeline store."""
    from collector.schema import Batch, SeriesBatch
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade
    from correlator.store.tsdb.ingest import store_batch

    engine = make_engine(url)
    upgrade(engine)
    for i in range(0, len(series), 200):
        part = series[i : i + 200]
        batch = [SeriesBatch(s.name, s.labels, s.ts.tolist(), s.values.tolist()) for s in part]
        store_batch(engine=engine, batch=Batch(batch))
    engine.dispose()


def timed(base: str, params: dict) -> tuple[float, int]:
    """Return the seconds one query_range took and its status."""
    began = time.perf_counter()
    resp = httpx.get(f"{base}/api/v1/query_range", params=params, timeout=120)
    return time.perf_counter() - began, resp.status_code


def main() -> None:
    """Seed both servers, ask every expression of both and print the figures."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=10, help="instances of each series")
    ap.add_argument("--hours", type=int, default=2)
    args = ap.parse_args()
    end = int(time.time() // 3600 - 1) * 3600
    start = end - args.hours * 3600
    exprs = [e for found in dashboards.expressions().values() for e in found]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        series = fleet(args.nodes, start, end)
        points = sum(s.ts.size for s in series)
        print(f"{len(series):,} series, {points:,} samples, {len(exprs)} expressions")
        url = f"sqlite:///{tmp / 'speed.db'}"
        store(url, series)
        ctx, prom = servers.prometheus_backfilled(tmp, series)
        port = free_port()
        ours = f"http://127.0.0.1:{port}"
        env = os.environ | {"CAUSELINE_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "causeline.cli", "serve", "--port", str(port)]
            + ["--no-alerts", "--no-evaluator"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with ctx:
                wait_ready(ours)
                for label, lo, step in (("10 min", end - 600, 15), ("whole", start, 60)):
                    report(label, exprs, ours, prom, {"start": lo, "end": end, "step": step})
        finally:
            proc.terminate()
            proc.wait(30)


def report(label: str, exprs: list[str], ours: str, prom: str, window: dict) -> None:
    """Ask every expression of both servers over one window and print the figures."""
    mine, theirs, worst, refused = [], [], [], 0
    for expr in exprs:
        params = {"query": expr, **window}
        timed(prom, params)  # warm both caches alike
        t_prom, _ = timed(prom, params)
        t_ours, status = timed(ours, params)
        refused += status != 200
        mine.append(t_ours)
        theirs.append(t_prom)
        worst.append((t_ours, expr))

    def figures(times: list[float]) -> str:
        ordered = sorted(times)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        return f"median {statistics.median(times) * 1000:7.1f} ms  p90 {p90 * 1000:7.1f} ms  " + (
            f"max {max(times) * 1000:7.1f} ms"
        )

    ratio = statistics.median(mine) / statistics.median(theirs)
    print(f"\n{label} (step {window['step']} s), {len(exprs)} queries, {refused} not 200:")
    print(f"  causeline   {figures(mine)}")
    print(f"  Prometheus  {figures(theirs)}")
    print(f"  median ratio {ratio:.1f}x")
    for took, expr in sorted(worst, reverse=True)[:5]:
        print(f"  slowest {took * 1000:7.1f} ms  {expr[:90]}")


if __name__ == "__main__":
    main()
