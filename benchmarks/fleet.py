"""A GPU fleet in the Debian VictoriaMetrics, an SLA per model, one incident: what causeline costs.

Writes ``--nodes`` GPU nodes (8 GPUs each: DCGM utilisation, memory, temperature, power, SM
clock, with ``Hostname``, ``gpu``, ``UUID``), node-exporter CPU counters, and ``--models``
models of 4 replicas each (``model_latency_p99_ms``, ``model_requests_per_second`` per
instance), ``--hours`` at 15 s, into VictoriaMetrics (``/api/v1/import/prometheus``). One
model's p99 breaches 20 minutes before the end; a GPU of one of its hosts throttles 6 minutes
earlier. causeline keeps SLAs (one per model) and the topology in SQLite and reads metrics
through its Prometheus source with the shipped mapping, as a fleet runs it.

It prints the size, one evaluation pass over every SLA (seconds, queries sent to the TSDB,
series answered), the incident it opens, the analysis of that incident (seconds, series
read and left out, the top suspects) and the process's peak memory.

    python benchmarks/fleet.py                      # 200 nodes, 40 models, 1 h
    python benchmarks/fleet.py --nodes 500 --models 100 --hours 2
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from correlator.bundle import Series  # noqa: E402
from correlator.incidents import snapshot  # noqa: E402
from correlator.incidents.evaluator import evaluate_once  # noqa: E402
from correlator.promsource import make_source  # noqa: E402
from correlator.settings import ServiceSettings  # noqa: E402
from correlator.store.engine import make_engine, write_transaction  # noqa: E402
from correlator.store.migrate import upgrade  # noqa: E402
from correlator.store.slas import upsert_sla  # noqa: E402
from correlator.store.topology import upsert_topology  # noqa: E402
from tests.promsource import servers  # noqa: E402

STEP = 15.0
DCGM = (
    ("DCGM_FI_DEV_GPU_UTIL", 55.0, 10.0),
    ("DCGM_FI_DEV_FB_USED", 30_000.0, 500.0),
    ("DCGM_FI_DEV_GPU_TEMP", 62.0, 1.5),
    ("DCGM_FI_DEV_POWER_USAGE", 210.0, 8.0),
    ("DCGM_FI_DEV_SM_CLOCK", 1_410.0, 5.0),
)
REPLICAS = 4


def fleet(nodes: int, models: int, ts: np.ndarray, breach: float) -> tuple[list[Series], dict]:
    """Return the fleet's series and the incident's truth (model, host, gpu)."""
    rng = np.random.default_rng(11)
    out: list[Series] = []
    sick = {"model": "m0", "host": f"gpu-node-{REPLICAS - 1}", "gpu": "3"}
    for n in range(nodes):
        host = f"gpu-node-{n}"
        for g in range(8):
            for name, base, noise in DCGM:
                values = base + rng.normal(0, noise, ts.size)
                if host == sick["host"] and str(g) == sick["gpu"]:
                    hot = ts >= breach - 360
                    if name == "DCGM_FI_DEV_SM_CLOCK":
                        values = np.where(hot, 600.0, values)  # throttled
                    if name == "DCGM_FI_DEV_GPU_TEMP":
                        values = np.where(hot, 91.0, values)
                labels = {"Hostname": host, "gpu": str(g), "UUID": f"GPU-{n}-{g}"}
                out.append(Series(name, labels, ts, np.round(values, 2)))
        idle = np.cumsum(np.full(ts.size, STEP * 0.6))
        cpu = {"instance": f"{host}:9100", "cpu": "0", "mode": "idle"}
        out.append(Series("node_cpu_seconds_total", cpu, ts, idle))
    for m in range(models):
        for r in range(REPLICAS):
            host = f"gpu-node-{(m * REPLICAS + r) % nodes}"
            labels = {"model": f"m{m}", "instance": f"{host}:8000"}
            p99 = 40.0 + rng.normal(0, 2, ts.size)
            if labels["model"] == sick["model"] and host == sick["host"]:
                p99 = np.where(ts >= breach, 180.0, p99)
            out.append(Series("model_latency_p99_ms", labels, ts, np.round(p99, 2)))
            qps = 250.0 + rng.normal(0, 10, ts.size)
            out.append(Series("model_requests_per_second", labels, ts, np.round(qps, 2)))
    return out, sick


def topology(nodes: int, models: int) -> dict:
    """Return instances serving models and running on hosts."""
    nodes_out, edges = [], []
    for m in range(models):
        nodes_out.append({"id": f"model:m{m}", "kind": "model", "owner": "algo"})
        for r in range(REPLICAS):
            host = f"gpu-node-{(m * REPLICAS + r) % nodes}"
            instance = f"instance:{host}:8000"
            nodes_out += [
                {"id": instance, "kind": "instance"},
                {"id": f"host:{host}", "kind": "host", "owner": "infra"},
            ]
            edges += [
                {"from": instance, "to": f"model:m{m}", "kind": "serves"},
                {"from": instance, "to": f"host:{host}", "kind": "runs_on"},
            ]
    unique = {n["id"]: n for n in nodes_out}
    return {"nodes": list(unique.values()), "edges": edges}


class Counted:
    """A prometheus-api-client that counts the queries it sends and the series answered."""

    def __init__(self, client):
        self.client, self.queries, self.series = client, 0, 0

    def custom_query_range(self, *args, **kwargs):
        self.queries += 1
        found = self.client.custom_query_range(*args, **kwargs)
        self.series += len(found)
        return found

    def custom_query(self, *args, **kwargs):
        self.queries += 1
        return self.client.custom_query(*args, **kwargs)


def main() -> None:
    """Write the fleet, evaluate every SLA once, analyse the incident, print the figures."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--models", type=int, default=40)
    ap.add_argument("--hours", type=float, default=1.0)
    args = ap.parse_args()
    end = (time.time() // STEP) * STEP - 60
    ts = np.arange(end - args.hours * 3600, end + 1, STEP)
    breach = end - 20 * 60
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        series, sick = fleet(args.nodes, args.models, ts, breach)
        samples = sum(s.ts.size for s in series)
        print(f"fleet: {args.nodes} nodes x 8 GPUs, {args.models} models x {REPLICAS} replicas")
        print(f"  {len(series):,} series, {samples:,} samples over {args.hours:g} h at 15 s")
        ctx, url = servers.victoria_metrics(tmp, None)
        with ctx:
            began = time.perf_counter()
            for i in range(0, len(series), 500):
                body = servers.exposition(series[i : i + 500], millis=True)
                httpx.post(f"{url}/api/v1/import/prometheus", content=body, timeout=300)
            httpx.get(f"{url}/internal/force_flush", timeout=60).raise_for_status()
            print(f"  written into VictoriaMetrics in {time.perf_counter() - began:.1f} s")
            del series
            run(tmp, url, args, end, sick)


def run(tmp: Path, url: str, args, end: float, sick: dict) -> None:
    """Evaluate every SLA once and analyse the incident; print the figures."""
    engine = make_engine(f"sqlite:///{tmp / 'causeline.db'}")
    upgrade(engine)
    with write_transaction(engine) as conn:
        upsert_topology(conn=conn, topology=topology(args.nodes, args.models))
        for m in range(args.models):
            sla = {"name": f"m{m} p99", "metric": "model_latency_p99_ms"}
            sla |= {"labels": {"model": f"m{m}"}, "aggregate": "max", "op": ">"}
            upsert_sla(conn=conn, sla=sla | {"threshold": 100.0, "for_seconds": 60.0})
    source = make_source(url)
    counted = Counted(source.reader.client)
    source.reader.client = counted
    settings = ServiceSettings(database_url=str(engine.url))
    began = time.perf_counter()
    report = evaluate_once(engine, holder="bench", now=end, settings=settings, source=source)
    took = time.perf_counter() - began
    print(
        f"evaluation pass over {report['checked']} SLAs (opening and analysing what breaches): "
        f"{took:.2f} s, {counted.queries} queries, {counted.series:,} series answered"
    )
    breaching = [name for name, state in report["slas"].items() if "breach" in state]
    print(f"  opened: {report['opened']} ({breaching})")
    counted.queries = counted.series = 0
    sla = {"name": "m0 p99", "metric": "model_latency_p99_ms", "labels": {"model": "m0"}}
    sla |= {"aggregate": "max", "op": ">", "threshold": 100.0, "for_seconds": 60.0}
    began = time.perf_counter()
    result = snapshot.analyze_window(engine, sla, at=end - 20 * 60, end=end, source=source)
    took = time.perf_counter() - began
    read = result["window"].get("series_read") or {"read": "all (under the bound)"}
    print(
        f"analysis of the incident: {took:.2f} s, {counted.queries} queries, "
        f"{counted.series:,} series answered; read {read}"
    )
    for s in result["suspects"][:3]:
        print(f"  #{s['rank']} {s.get('metric')} {s.get('labels')} score {s.get('score')}")
    print(f"  truth: {sick}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process (TSDB writing included): {peak:,.0f} MiB")
    source.close()
    engine.dispose()


if __name__ == "__main__":
    main()
