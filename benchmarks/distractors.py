"""Move each benign distractor of generated incidents onto a node the SLA depends on, and score.

Usage: .venv/bin/python benchmarks/distractors.py ../shared/scenarios/public [--keep DIR]
       .venv/bin/python benchmarks/distractors.py ../shared/scenarios/public --before-root 300

Generated bundles list their benign distractors in truth.json (kind, target node, time),
mostly on nodes the breached model does not depend on. Here each distractor on a host or
GPU is copied onto a host that runs the breached model, one on a feature service onto the
service the model calls, and one on an instance onto one of the model's instances: the
same deviation from its level, at the same time, on the connected node, never on the node
of the root cause or of the root change. Each variant holds one moved distractor, so a
case with three distractors of movable kinds gives three variants. Prints AC@1, AC@3 and
owner accuracy of ``analyze`` on the originals and on the variants, and each variant's
rank with ``--cases``. ``--before-root S`` also moves each distractor in time, to begin S
seconds before the root cause's onset (``root_onset``), where it is likeliest to be taken
for the cause or to seem to explain it; cases without a ``root_onset`` keep their times.

truth.json is read here to place the distractors and to score, never by the product.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import first_hit  # noqa: E402

from correlator.analysis import analyze  # noqa: E402
from correlator.bundle import read_bundle  # noqa: E402

# Label of each node kind a distractor may target (a GPU is host/gpu).
NODE_LABEL = {"host": "host", "service": "service", "instance": "instance"}
# The metrics each distractor kind of the generator moves (name prefixes).
KIND_METRICS = {
    "cpu": ("node_cpu_",),
    "mem": ("node_memory_",),
    "disk": ("node_disk_",),
    "net": ("node_network_",),
    "gpu_temp": ("gpu_temperature_", "gpu_sm_clock_", "gpu_power_"),
    "latency": ("model_latency_",),
    "feature_latency": ("feature_service_latency_", "feature_service_error_"),
}
# How long before a distractor's time its level is measured, in seconds.
LEVEL_S = 600.0
# A series moved with the distractor when it left its level by this many robust sigmas.
MOVED_Z = 8.0


def _targets(target: str) -> dict[str, str]:
    """Return the labels naming a distractor's node: ``host:h/gpu1`` -> host h, gpu 1."""
    kind, _, name = target.partition(":")
    if kind == "host" and "/" in name:
        host, gpu = name.split("/", 1)
        return {"host": host, "gpu": gpu.removeprefix("gpu")}
    return {NODE_LABEL[kind]: name} if kind in NODE_LABEL else {}


def _connected(kind: str, topology: dict, model: str, avoid: set[str]) -> list[str]:
    """Return nodes of ``kind`` the breached model depends on, less those in ``avoid``."""
    edges = topology.get("edges", [])
    instances = [
        e["from"] for e in edges if e.get("kind") == "serves" and e["to"] == f"model:{model}"
    ]
    if kind == "instance":
        found = instances
    elif kind == "host":
        found = [e["to"] for e in edges if e.get("kind") == "runs_on" and e["from"] in instances]
    elif kind == "service":
        found = [
            e["to"] for e in edges if e.get("kind") == "calls" and e["from"] == f"model:{model}"
        ]
    else:
        found = []
    return sorted({n.partition(":")[2] for n in found} - avoid)


def _root_nodes(truth: dict, case: Path) -> set[str]:
    """Return the names of the nodes the root cause sits on or changed: no distractor goes there."""
    changes = {c["id"]: c for c in json.loads((case / "changes.json").read_text())}
    names = {truth.get("root_host") or ""}
    for cause in truth["root_causes"]:
        names.update((cause.get("labels") or {}).values())
        change = changes.get(cause.get("id"), {})
        names.update((change.get("labels") or {}).values())
        names.add(change.get("target", "").partition(":")[2])
    return names


def _moved(series: dict, at: float) -> np.ndarray | None:
    """Return a series' deviation from its level after ``at`` when it moved then, else None."""
    ts = np.array([float(t) for t, _ in series["values"]])
    vs = np.array([float(v) for _, v in series["values"]])
    before = (ts >= at - LEVEL_S) & (ts < at)
    if before.sum() < 5:
        return None
    level = float(np.median(vs[before]))
    spread = max(1.4826 * float(np.median(np.abs(vs[before] - level))), 1e-9, abs(level) * 0.01)
    dev = np.where(ts >= at, vs - level, 0.0)
    return dev if np.abs(dev).max() / spread >= MOVED_Z else None


def _twin(doc: dict, name: str, key: str, node: str, gpu: str | None) -> dict | None:
    """Return the series ``name`` of another node (and the same GPU number), if any."""
    for s in doc["data"]["result"]:
        m = s["metric"]
        if m["__name__"] == name and m.get(key) == node and m.get("gpu") == gpu:
            return s
    return None


def _labels_of(series: dict) -> dict[str, str]:
    return {k: v for k, v in series["metric"].items() if k != "__name__"}


def variants(case: Path, before_root: float | None = None) -> list[tuple[str, dict]]:
    """Return (description, metrics document) for each distractor moved onto a connected node.

    With ``before_root``, the moved deviation begins that many seconds before the root's onset.
    """
    truth = json.loads((case / "truth.json").read_text())
    topology = json.loads((case / "topology.json").read_text())
    doc = json.loads(gzip.decompress((case / "metrics.json.gz").read_bytes()))
    model = truth.get("breached_model")
    avoid = _root_nodes(truth, case)
    out = []
    for d in truth.get("distractors", []):
        labels = _targets(d["target"])
        kind = d["target"].partition(":")[0]
        metrics = KIND_METRICS.get(d["kind"])
        if not labels or not model or not metrics:
            continue
        places = [n for n in _connected(kind, topology, model, avoid) if n not in labels.values()]
        if not places:
            continue
        key = NODE_LABEL[kind]
        shift = 0.0  # seconds the deviation moves later in time
        if before_root is not None and truth.get("root_onset"):
            shift = float(truth["root_onset"]) - before_root - float(d["ts"])
        moved = copy.deepcopy(doc)
        count = 0
        for s in doc["data"]["result"]:
            own = _labels_of(s)
            if any(own.get(k) != v for k, v in labels.items()):
                continue
            if not s["metric"]["__name__"].startswith(metrics):
                continue
            dev = _moved(s, float(d["ts"]))
            twin = _twin(moved, s["metric"]["__name__"], key, places[0], own.get("gpu"))
            if dev is None or twin is None:
                continue
            ts = np.array([float(t) for t, _ in s["values"]])
            at = np.array([float(t) for t, _ in twin["values"]])
            add = np.interp(at - shift, ts, dev, left=0.0, right=float(dev[-1]))
            twin["values"] = [
                [t, repr(float(v) + float(x))]
                for (t, v), x in zip(twin["values"], add, strict=True)
            ]
            count += 1
        if count:
            out.append((f"{d['kind']} {d['target']} -> {key} {places[0]} ({count} series)", moved))
    return out


def _write(case: Path, doc: dict, folder: Path) -> Path:
    """Return a bundle folder: the case's files with ``doc`` as its metrics."""
    shutil.copytree(case, folder)
    (folder / "metrics.json.gz").chmod(0o644)
    (folder / "metrics.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    return folder


def _score(folder: Path, truth: dict) -> tuple[int | None, bool]:
    suspects = analyze(read_bundle(folder))["suspects"]
    owner = bool(suspects) and suspects[0].get("owner") == truth.get("owner")
    return first_hit(suspects[:5], truth), owner


def _line(name: str, rows: list[tuple[int | None, bool]]) -> str:
    if not rows:
        return f"  {name:10s}   0 cases  (no distractor of a movable kind listed)"
    n = len(rows)
    ac1 = sum(1 for h, _ in rows if h == 1) / n
    ac3 = sum(1 for h, _ in rows if h is not None and h <= 3) / n
    owner = sum(1 for _, o in rows if o) / n
    return f"  {name:10s} {len(rows):3d} cases  AC@1 {ac1:.2f}  AC@3 {ac3:.2f}  owner {owner:.2f}"


def main(argv: list[str] | None = None) -> int:
    """Score the originals and their connected-distractor variants."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--cases", action="store_true", help="print each variant's rank")
    parser.add_argument("--keep", type=Path, help="write the variant bundles into this folder")
    parser.add_argument(
        "--before-root",
        type=float,
        metavar="S",
        help="move each distractor to begin S seconds before the root's onset",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        for folder in args.folders:
            originals, moved = [], []
            for case in sorted(p for p in folder.iterdir() if (p / "truth.json").is_file()):
                truth = json.loads((case / "truth.json").read_text())
                originals.append(_score(case, truth))
                for i, (what, doc) in enumerate(variants(case, args.before_root)):
                    bundle = _write(case, doc, where / f"{case.name}-moved{i}")
                    moved.append(_score(bundle, truth))
                    if args.cases:
                        print(f"    {case.name:28s} {what:70s} rank={moved[-1][0]}")
            print(f"== {folder}")
            print(_line("original", originals))
            print(_line("moved", moved))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
