"""The PromQL of three real Grafana dashboards, and samples for every metric they read.

``expressions()`` gives each dashboard's panel expressions with its variables set;
``samples()`` makes, for every metric those expressions select, a few series whose labels
satisfy the selectors (and some that do not), counters with resets, gauges and histograms.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import re2

from correlator.bundle import Series
from correlator.promql import plan

HERE = Path(__file__).parent / "dashboards"
# Grafana's variables, as a user viewing one node, GPU host or model would set them.
VARIABLES = {
    "$__rate_interval": "1m",
    "$node": "host1:9100",
    "$job": "node",
    "$instance": "gpu1:9400",
    "$gpu": "0",
    "$model_name": "m1",
}
# Label values tried against a regex matcher; those that match are used.
CANDIDATES = ("sda", "nvme0n1", "eth0", "/", "/boot", "ext4", "0", "1", "idle", "user", "x")
STEP = 15


def _panel_exprs(path: Path) -> list[str]:
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str) and node["expr"].strip():
                found.append(node["expr"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(path.read_text()))
    return found


def _vllm_exprs(path: Path) -> list[str]:
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    out: list[str] = []
    for line in lines:
        if out and (line.strip() == "/" or out[-1].endswith(" /")):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


def _set(expr: str) -> str:
    for name, value in VARIABLES.items():
        expr = expr.replace(name, value)
    return expr


def expressions() -> dict[str, list[str]]:
    """Return each dashboard's distinct expressions, variables set."""
    raw = {
        "node-exporter-full": _panel_exprs(HERE / "node-exporter-full.json"),
        "dcgm-exporter": _panel_exprs(HERE / "dcgm-exporter-dashboard.json"),
        "vllm": _vllm_exprs(HERE / "vllm-exprs.txt"),
    }
    return {name: list(dict.fromkeys(_set(e) for e in exprs)) for name, exprs in raw.items()}


def _selectors(node) -> list:
    """Return the selectors (correlator.selector.Selector) a plan reads."""
    if isinstance(node, plan.Select):
        return [node.selector]
    found = []
    for value in vars(node).values():
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if hasattr(item, "__dataclass_fields__") and not isinstance(item, plan.Matching):
                found += _selectors(item)
    return found


def _label_values(selectors: list) -> dict[str, list[str]]:
    """Return, per label, the values that satisfy the selectors' matchers of it."""
    values: dict[str, list[str]] = {}
    for sel in selectors:
        for m in sel.matchers:
            if m.label == "le":
                continue
            wanted = values.setdefault(m.label, [])
            if m.op == "=":
                choice = [m.value] if m.value else []
            elif m.op == "=~":
                pattern = re2.compile(f"^(?:{m.value})$")
                tried = (m.value, *CANDIDATES)  # a regex is often a literal value
                choice = [c for c in tried if pattern.match(c)][:2]
            else:
                choice = []
            wanted += [c for c in choice if c not in wanted]
    return {k: v[:3] for k, v in values.items() if v}


def _values(name: str, rng: np.random.Generator, ts: np.ndarray) -> np.ndarray:
    if name.endswith(("_total", "_count", "_sum", "_seconds", "_bucket")) or "_seconds_" in name:
        rate = rng.uniform(0.5, 20)
        values = np.cumsum(rng.uniform(0, 2 * rate * STEP, ts.size))
        if rng.random() < 0.3:  # a restart: the counter starts again
            cut = ts.size // 2
            values[cut:] -= values[cut - 1]
        return values
    base = rng.uniform(1, 1e10) if "bytes" in name else rng.uniform(0, 100)
    return base * (1 + 0.2 * np.sin(np.arange(ts.size) / rng.uniform(5, 40)))


def samples(exprs: list[str], start: int, end: int, seed: int = 7) -> list[Series]:
    """Return series for every metric the expressions select, over [start, end] at 15 s."""
    rng = np.random.default_rng(seed)
    ts = np.arange(start, end + 1, STEP, dtype=float)
    by_name: dict[str, list] = {}
    for expr in exprs:
        for sel in _selectors(plan.parse_query(expr)):
            if sel.name:
                by_name.setdefault(sel.name, []).append(sel)
    out: list[Series] = []
    for name in sorted(by_name):
        choices = _label_values(by_name[name])
        keys = sorted(choices)
        combos = list(itertools.product(*(choices[k] for k in keys)))[:6]
        sets = [dict(zip(keys, combo, strict=True)) for combo in combos]
        other = {**(sets[0] if sets else {}), "instance": "host2:9100", "job": "other"}
        for labels in [*sets, other]:
            if name.endswith("_bucket"):
                total = _values(name, rng, ts)
                for share, le in ((0.2, "0.1"), (0.6, "0.5"), (0.9, "1"), (1.0, "+Inf")):
                    out.append(Series(name, {**labels, "le": le}, ts, np.floor(total * share)))
            else:
                out.append(Series(name, labels, ts, _values(name, rng, ts)))
    return out
