"""Evaluate a plan (correlator.promql.plan) at each step of a range, as Prometheus does.

Samples come from ``fetch(selector, start_ms, end_ms)``: the stored series of a selector with
their samples in [start_ms, end_ms]. Windows are closed on both ends and an instant selector
looks back 5 minutes, as in Prometheus 2.x. ``tick()`` is called between units of work (a
series, a group); the caller's tick raises to stop an evaluation past its deadline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from correlator.promql.functions import bucket_quantile, window_rates
from correlator.promql.plan import (
    Aggregate,
    Arith,
    Negate,
    Node,
    Number,
    Quantile,
    RangeCall,
    Select,
    scalar_op,
)
from correlator.selector import Selector

LOOKBACK_MS = 300_000
TICK_EVERY = 1024  # steps between ticks in histogram_quantile's per-step loop
NAME = "__name__"


class EvalError(ValueError):
    """A query that parsed but cannot be evaluated (Prometheus' ``execution`` error)."""


@dataclass(slots=True)
class Raw:
    """One stored series: labels with ``__name__``, timestamps (ms, sorted) and values."""

    labels: dict[str, str]
    ts: np.ndarray
    values: np.ndarray


@dataclass(slots=True)
class Vec:
    """One output series over the steps: values, and whether each step has one."""

    labels: dict[str, str]
    values: np.ndarray
    present: np.ndarray


Fetch = Callable[[Selector, int, int], list[Raw]]
Tick = Callable[[], None]
Value = list[Vec] | np.ndarray  # a vector per step, or a scalar per step


def _no_limit() -> None:
    """Let an evaluation run to its end."""


def _without_name(labels: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if k != NAME}


def _instant(node: Select, steps: np.ndarray, fetch: Fetch, tick: Tick) -> list[Vec]:
    at = steps - node.offset_ms
    out = []
    for raw in fetch(node.selector, int(at[0]) - LOOKBACK_MS, int(at[-1])):
        tick()
        idx = np.searchsorted(raw.ts, at, side="right") - 1
        safe = np.clip(idx, 0, None)
        present = (idx >= 0) & (raw.ts[safe] >= at - LOOKBACK_MS) if raw.ts.size else idx >= 0
        values = raw.values[safe] if raw.ts.size else np.zeros(at.size)
        out.append(Vec(raw.labels, np.where(present, values, np.nan), present))
    return out


def _range_call(node: RangeCall, steps: np.ndarray, fetch: Fetch, tick: Tick) -> list[Vec]:
    sel = node.arg
    ends = steps - sel.offset_ms
    starts = ends - sel.range_ms
    out = []
    for raw in fetch(sel.selector, int(starts[0]), int(ends[-1])):
        tick()
        values, present = window_rates(raw.ts, raw.values, starts, ends, node.func)
        out.append(Vec(_without_name(raw.labels), values, present))
    return out


def _group_key(labels: dict[str, str], node: Aggregate) -> tuple:
    if node.without:
        drop = {*node.labels, NAME}
        kept = {k: v for k, v in labels.items() if k not in drop}
    else:
        kept = {k: labels[k] for k in node.labels if labels.get(k, "") != ""}
    return tuple(sorted(kept.items()))


def _aggregate(node: Aggregate, vecs: list[Vec], tick: Tick) -> list[Vec]:
    groups: dict[tuple, list[Vec]] = {}
    for vec in vecs:
        groups.setdefault(_group_key(vec.labels, node), []).append(vec)
    out = []
    for key, members in groups.items():
        tick()
        values = np.stack([m.values for m in members])
        present = np.stack([m.present for m in members])
        count = present.sum(axis=0)
        with np.errstate(all="ignore"):
            if node.op == "count":
                result = count.astype(float)
            elif node.op in ("sum", "avg"):
                result = np.where(present, values, 0.0).sum(axis=0)
                if node.op == "avg":
                    result = result / np.maximum(count, 1)
            else:
                fill = -np.inf if node.op == "max" else np.inf
                pick = np.fmax if node.op == "max" else np.fmin
                result = pick.reduce(np.where(present, values, fill), axis=0)
                all_nan = (np.isnan(values) | ~present).all(axis=0)
                result = np.where(all_nan, np.nan, result)
        any_present = count > 0
        out.append(Vec(dict(key), np.where(any_present, result, np.nan), any_present))
    return out


def _le(labels: dict[str, str]) -> float | None:
    text = labels.get("le")
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _quantile(node: Quantile, vecs: list[Vec], size: int, tick: Tick) -> list[Vec]:
    groups: dict[tuple, list[tuple[float, Vec]]] = {}
    for vec in vecs:
        bound = _le(vec.labels)
        if bound is None:
            continue
        rest = {k: v for k, v in vec.labels.items() if k not in (NAME, "le")}
        groups.setdefault(tuple(sorted(rest.items())), []).append((bound, vec))
    out = []
    for key, members in groups.items():
        values = np.full(size, np.nan)
        present = np.zeros(size, dtype=bool)
        for i in range(size):
            if i % TICK_EVERY == 0:
                tick()
            buckets = [(b, float(v.values[i])) for b, v in members if v.present[i]]
            if buckets:
                values[i], present[i] = bucket_quantile(node.phi, buckets), True
        out.append(Vec(dict(key), values, present))
    return out


def _arith(node: Arith, steps: np.ndarray, fetch: Fetch, tick: Tick) -> Value:
    lhs, rhs = evaluate(node.lhs, steps, fetch, tick), evaluate(node.rhs, steps, fetch, tick)
    if isinstance(lhs, np.ndarray) and isinstance(rhs, np.ndarray):
        return scalar_op(node.op, lhs, rhs)
    if isinstance(lhs, np.ndarray):
        return [
            Vec(_without_name(v.labels), scalar_op(node.op, lhs, v.values), v.present) for v in rhs
        ]
    return [Vec(_without_name(v.labels), scalar_op(node.op, v.values, rhs), v.present) for v in lhs]


def evaluate(node: Node, steps: np.ndarray, fetch: Fetch, tick: Tick = _no_limit) -> Value:
    """Return the node's value at each step (int64 unix ms): series, or a scalar array."""
    tick()
    if isinstance(node, Number):
        return np.full(steps.size, node.value)
    if isinstance(node, Select):
        return _instant(node, steps, fetch, tick)
    if isinstance(node, RangeCall):
        return _range_call(node, steps, fetch, tick)
    if isinstance(node, Negate):
        inner = evaluate(node.expr, steps, fetch, tick)
        if isinstance(inner, np.ndarray):
            return -inner
        return [Vec(_without_name(v.labels), -v.values, v.present) for v in inner]
    if isinstance(node, Arith):
        return _arith(node, steps, fetch, tick)
    inner = evaluate(node.expr, steps, fetch, tick)
    if isinstance(inner, np.ndarray):
        raise EvalError(f"expected an instant vector in {type(node).__name__}, got a scalar")
    if isinstance(node, Aggregate):
        return _aggregate(node, inner, tick)
    return _quantile(node, inner, steps.size, tick)


def run(node: Node, steps: np.ndarray, fetch: Fetch, tick: Tick = _no_limit) -> Value:
    """Return ``evaluate``'s answer with empty series dropped and sorted by labels."""
    value = evaluate(node, steps, fetch, tick)
    if isinstance(value, np.ndarray):
        return value
    kept = [v for v in value if v.present.any()]
    seen: set[tuple] = set()
    for vec in kept:
        key = tuple(sorted(vec.labels.items()))
        if key in seen:
            raise EvalError("vector cannot contain metrics with the same labelset")
        seen.add(key)
    return sorted(kept, key=lambda v: tuple(sorted(v.labels.items())))


def steps_of(start_ms: int, end_ms: int, step_ms: int) -> np.ndarray:
    """Return Prometheus' evaluation timestamps: start, start+step, ... up to end."""
    count = (end_ms - start_ms) // step_ms + 1
    return start_ms + step_ms * np.arange(count, dtype=np.int64)
