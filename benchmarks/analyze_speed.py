"""Time ``analyze`` on one generated bundle of 10,000 series x 720 points.

Usage: .venv/bin/python benchmarks/analyze_speed.py [--series 10000] [--points 720]

Prints the time to read the bundle, to analyse it (timeline and ranking apart), the
end-to-end time, the peak RSS, and RCAEval's n-sigma on the same data (where installed).
"""

from __future__ import annotations

import argparse
import gzip
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from correlator.analysis import analyze  # noqa: E402
from correlator.bundle import read_bundle  # noqa: E402

LE = ["16", "32", "64", "128", "256", "512", "1024", "2048", "+Inf"]


def generate(folder: Path, *, n_series: int, points: int, seed: int = 0) -> int:
    """Write a bundle with hosts, GPUs, instances, histograms, changes; return its series count."""
    rng = np.random.default_rng(seed)
    t0, step = 1_733_000_000.0, 15.0
    ts = t0 + step * np.arange(points)
    breach_at = int(points * 0.75)
    result, nodes, edges = [], [], []

    def add(name, labels, values, skew):
        times = np.round(ts + skew, 3).tolist()
        text = np.round(values, 3).astype(str).tolist()
        pairs = list(zip(times, text, strict=True))
        result.append({"metric": {"__name__": name, **labels}, "values": pairs})

    n_hosts = max(2, n_series // 250)
    for h in range(n_hosts):
        host = f"node-{h:03d}"
        nodes.append({"id": f"host:{host}", "kind": "host", "owner": "infra"})
        skew = rng.uniform(-3, 3)
        for m in ("node_cpu_utilization_percent", "node_disk_io_utilization_percent"):
            add(m, {"host": host}, 30 + rng.normal(0, 2, points), skew)
        for g in range(8):
            for m in ("gpu_utilization_percent", "gpu_temperature_celsius"):
                vals = 50 + rng.normal(0, 2, points)
                if h == 0 and g == 0 and m == "gpu_temperature_celsius":
                    vals[breach_at - 30 :] += 40
                add(m, {"host": host, "gpu": str(g)}, vals, skew)
    i = 0
    while len(result) < n_series:
        model, inst, host = f"model_{i % 50}", f"inst-{i}", f"node-{i % n_hosts:03d}"
        if f"model:{model}" not in {n["id"] for n in nodes[-60:]}:
            nodes.append({"id": f"model:{model}", "kind": "model", "owner": "algo"})
        nodes.append({"id": f"instance:{inst}", "kind": "instance", "owner": "infra"})
        edges += [
            {"from": f"instance:{inst}", "to": f"model:{model}", "kind": "serves"},
            {"from": f"instance:{inst}", "to": f"host:{host}", "kind": "runs_on"},
        ]
        labels = {"model": model, "instance": inst, "version": "1.0"}
        lat = 20 + rng.normal(0, 1, points)
        if model == "model_0":
            lat[breach_at - 10 :] += 80
        for m, vals in (
            ("model_latency_p99_ms", lat),
            ("model_requests_per_second", 100 + rng.normal(0, 5, points)),
            ("model_queue_length", np.abs(rng.normal(2, 1, points))),
        ):
            add(m, labels, vals, 0.0)
        rates = rng.poisson(100, (points, len(LE))).astype(float)
        cum = np.cumsum(np.cumsum(rates, axis=1), axis=0)
        for k, le in enumerate(LE):
            add("model_input_length_bucket", {**labels, "le": le}, cum[:, k], 0.0)
        i += 1
    seen, uniq = set(), []
    for n in nodes:
        if n["id"] not in seen:
            seen.add(n["id"])
            uniq.append(n)
    doc = {"status": "success", "data": {"resultType": "matrix", "result": result}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.json.gz").write_bytes(gzip.compress(orjson.dumps(doc), compresslevel=1))
    changes = [
        {
            "id": f"chg-{k}",
            "ts": t0 + step * (k * 30),
            "kind": "deploy",
            "target": f"model:model_{k}",
            "owner": "algo",
            "labels": {"model": f"model_{k}"},
            "summary": "rollout",
        }
        for k in range(20)
    ]
    (folder / "changes.json").write_bytes(orjson.dumps(changes))
    (folder / "topology.json").write_bytes(orjson.dumps({"nodes": uniq, "edges": edges}))
    sla = {
        "name": "model_0 p99",
        "metric": "model_latency_p99_ms",
        "labels": {"model": "model_0"},
        "aggregate": "max",
        "op": ">",
        "threshold": 60,
        "for_seconds": 60,
    }
    (folder / "sla.json").write_bytes(orjson.dumps(sla))
    return len(result)


def _nsigma():
    """Return RCAEval's n-sigma as a bundle ranker, or None when RCAEval is not installed."""
    try:
        from accuracy import rcaeval_ranker

        return rcaeval_ranker("nsigma")
    except ImportError:
        return None


def main(argv: list[str] | None = None) -> int:
    """Generate the bundle, time the analysis and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=10_000)
    parser.add_argument("--points", type=int, default=720)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "bundle"
        n = generate(folder, n_series=args.series, points=args.points)
        t0 = time.perf_counter()
        bundle = read_bundle(folder)
        t1 = time.perf_counter()
        out = analyze(bundle)
        t2 = time.perf_counter()
        nsigma = _nsigma()
        if nsigma is not None:
            nsigma(bundle)
        t3 = time.perf_counter()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    top = out["suspects"][0]
    print(f"series {n} x {args.points} points")
    print(f"read bundle      {t1 - t0:6.2f} s")
    print(
        f"analyze          {t2 - t1:6.2f} s  (timeline {out['timings']['timeline_s']:.2f} s,"
        f" ranking {out['timings']['ranking_s']:.2f} s)"
    )
    print(f"end to end       {t2 - t0:6.2f} s")
    if nsigma is not None:
        ratio = (t2 - t1) / (t3 - t2)
        print(f"n-sigma          {t3 - t2:6.2f} s  (analyze / n-sigma = {ratio:.2f})")
    else:
        print("n-sigma          skipped: pip install -e '.[bench]' for RCAEval")
    print(f"peak RSS         {peak_mib:6.0f} MiB")
    print(f"top suspect      {top.get('metric', top.get('id'))} {top.get('labels', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
