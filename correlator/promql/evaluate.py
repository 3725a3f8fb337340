"""Evaluate a plan (correlator.promql.plan) at each step of a range, as Prometheus 2.42 does.

Samples come from ``fetch(selector, start_ms, end_ms)``: the stored series of a selector with
their samples in [start_ms, end_ms]; a NaN value is a staleness marker (the series stopped).
Windows are closed on both ends and an instant selector looks back 5 minutes, stopping at a
staleness marker, as in Prometheus 2.x. Values are ``correlator.promql.values``'; operators,
aggregations and functions are ``binary``, ``aggregate``, ``range_functions`` and
``vector_functions``, pure functions of the values this module reads. ``tick()`` is called
between units of work (a series, a group); the caller's tick raises to stop an evaluation
past its deadline.
"""

from __future__ import annotations

import numpy as np

from correlator.promql import aggregate, binary, range_functions, vector_functions
from correlator.promql.plan import (
    RANGE_FUNCTIONS,
    Aggregate,
    Binary,
    Call,
    Matrix,
    Negate,
    Node,
    Number,
    Select,
    String,
    Subquery,
)
from correlator.promql.values import (
    Context,
    EvalError,
    Fetch,
    Raw,
    Tick,
    Value,
    Vec,
    Windows,
    label_key,
    vector_of,
    without_name,
)

__all__ = ["EvalError", "Raw", "Vec", "Value", "evaluate", "run", "steps_of"]

LOOKBACK_MS = 300_000
SUBQUERY_STEP_MS = 60_000  # a subquery's step when it names none (Prometheus' default)
MAX_SUBQUERY_STEPS = 11_000  # steps one subquery evaluates, as a range query's resolution


def _no_limit() -> None:
    """Let an evaluation run to its end."""


def _in_order(raws: list[Raw]) -> list[Raw]:
    """Return series sorted by their labels, the order Prometheus reads (and adds) them in."""
    return sorted(raws, key=lambda r: label_key(r.labels))


def _at(steps: np.ndarray, at: int | str | None, ctx: Context) -> np.ndarray:
    """Return the times a node is evaluated at: the steps, or one time for an @ modifier."""
    if at is None:
        return steps
    fixed = ctx.start_ms if at == "start" else ctx.end_ms if at == "end" else int(at)
    return np.full(steps.size, fixed, dtype=np.int64)


def _instant(node: Select, steps: np.ndarray, ctx: Context, times: bool = False) -> list[Vec]:
    """Return each series' latest sample within the lookback; ``times``: its time (s) instead."""
    at = _at(steps, node.at, ctx) - node.offset_ms
    raws = _in_order(ctx.fetch(node.selector, int(at.min()) - LOOKBACK_MS, int(at.max())))
    ctx.hold(len(raws), steps.size)
    out = []
    for raw in raws:
        ctx.tick()
        if not raw.ts.size:
            continue
        idx = np.searchsorted(raw.ts, at, side="right") - 1
        safe = np.clip(idx, 0, None)
        values = raw.values[safe]
        present = (idx >= 0) & (raw.ts[safe] >= at - LOOKBACK_MS) & ~raw.markers()[safe]
        if times:
            values = raw.ts[safe] / 1000.0
        out.append(Vec(raw.labels, np.where(present, values, np.nan), present))
    return out


def windows(node: Matrix | Subquery, steps: np.ndarray, ctx: Context) -> Windows:
    """Return a range vector argument: its series and each step's window."""
    if isinstance(node, Matrix):
        ends = _at(steps, node.select.at, ctx) - node.select.offset_ms
        starts = ends - node.range_ms
        found = ctx.fetch(node.select.selector, int(starts.min()), int(ends.max()))
        ctx.hold(len(found), steps.size)
        series = []
        for raw in _in_order(found):
            ts, values = raw.samples()
            series.append(Raw(raw.labels, ts, values))
        return Windows(series, starts, ends)
    ends = _at(steps, node.at, ctx) - node.offset_ms
    starts = ends - node.range_ms
    step = node.step_ms or SUBQUERY_STEP_MS
    first = -(-int(starts.min()) // step) * step  # the first multiple of step in the range
    count = (int(ends.max()) - first) // step + 1
    if count > MAX_SUBQUERY_STEPS:
        raise EvalError(
            f"the subquery would evaluate {count:,} steps (at most {MAX_SUBQUERY_STEPS:,}): "
            "give it a coarser step or a shorter range"
        )
    inner = first + step * np.arange(max(count, 0), dtype=np.int64)
    if not inner.size:
        return Windows([], starts, ends)
    value = evaluate_node(node.expr, inner, ctx)
    if isinstance(value, np.ndarray):
        raise EvalError("a subquery needs an instant vector, not a scalar")
    series = [Raw(v.labels, inner[v.present], v.values[v.present]) for v in value]
    return Windows(series, starts, ends)


def evaluate_node(node: Node, steps: np.ndarray, ctx: Context) -> Value:
    """Return the node's value at each step (int64 unix ms): series, or a scalar array."""
    ctx.tick()
    if isinstance(node, Number):
        return np.full(steps.size, node.value)
    if isinstance(node, Select):
        return _instant(node, steps, ctx)
    if isinstance(node, Negate):
        inner = evaluate_node(node.expr, steps, ctx)
        if isinstance(inner, np.ndarray):
            return -inner
        return [Vec(without_name(v.labels), -v.values, v.present) for v in inner]
    if isinstance(node, Binary):
        lhs = evaluate_node(node.lhs, steps, ctx)
        rhs = evaluate_node(node.rhs, steps, ctx)
        return binary.apply(node, lhs, rhs, ctx.tick)
    if isinstance(node, Aggregate):
        inner = vector_of(evaluate_node(node.expr, steps, ctx), node.op)
        param: str | np.ndarray | None = None
        if isinstance(node.param, String):
            param = node.param.value
        elif node.param is not None:
            param = _scalar(node.param, steps, ctx, node.op)
        return aggregate.apply(node, inner, param, ctx.tick)
    if isinstance(node, Call):
        return _call(node, steps, ctx)
    if isinstance(node, String):
        raise EvalError("a string is only an argument of a function or aggregation")
    raise EvalError("a range vector is only the argument of a function, as rate(x[5m])")


def absent_labels(node: Node) -> dict[str, str]:
    """Return the labels absent() gives: the selector's equality matchers of one value each."""
    select = node.select if isinstance(node, Matrix) else node
    if not isinstance(select, Select):
        return {}
    labels: dict[str, str] = {}
    dropped = set()
    for m in select.selector.matchers:
        if m.op == "=" and m.label not in labels:
            labels[m.label] = m.value
        else:
            dropped.add(m.label)
    return {k: v for k, v in labels.items() if k not in dropped and k != "__name__"}


def _call(node: Call, steps: np.ndarray, ctx: Context) -> Value:
    if node.func in RANGE_FUNCTIONS:
        ranged = [a for a in node.args if isinstance(a, Matrix | Subquery)]
        if len(ranged) != 1:
            raise EvalError(f"{node.func}() needs one range vector, as {node.func}(x[5m])")
        win = windows(ranged[0], steps, ctx)
        if node.func == "absent_over_time":
            return range_functions.absent_over_time(win, absent_labels(ranged[0]))
        scalars = [_scalar(a, steps, ctx, node.func) for a in node.args if a is not ranged[0]]
        return range_functions.apply(node.func, win, scalars, steps, ctx.tick)
    if node.func == "timestamp" and isinstance(node.args[0], Select):
        found = _instant(node.args[0], steps, ctx, times=True)
        return [Vec(without_name(v.labels), v.values, v.present) for v in found]
    args: list = []
    for arg in node.args:
        if isinstance(arg, String):
            args.append(arg.value)
        elif isinstance(arg, Matrix | Subquery):
            raise EvalError(f"{node.func}() takes an instant vector, not a range vector")
        else:
            args.append(evaluate_node(arg, steps, ctx))
    if node.func == "absent":
        vecs = vector_of(args[0], "absent")
        return vector_functions.absent(vecs, absent_labels(node.args[0]), steps.size)
    return vector_functions.apply(node.func, args, steps, ctx.tick)


def _scalar(node: Node, steps: np.ndarray, ctx: Context, what: str) -> np.ndarray:
    value = evaluate_node(node, steps, ctx)
    if not isinstance(value, np.ndarray):
        raise EvalError(f"expected a scalar argument of {what}, got a vector")
    return value


def evaluate(
    node: Node,
    steps: np.ndarray,
    fetch: Fetch,
    tick: Tick = _no_limit,
    max_points: int | None = None,
) -> Value:
    """Return the node's value at each step (int64 unix ms): series, or a scalar array.

    ``max_points`` bounds the series x steps the selectors read may hold, together.
    """
    ctx = Context(fetch, tick, int(steps[0]), int(steps[-1]), max_points)
    return evaluate_node(node, steps, ctx)


def _merged(vecs: list[Vec]) -> list[Vec]:
    """Join series of one label set present at different steps; EvalError where they overlap."""
    by_labels: dict[tuple, Vec] = {}
    for vec in vecs:
        key = label_key(vec.labels)
        seen = by_labels.get(key)
        if seen is None:
            by_labels[key] = vec
            continue
        if (seen.present & vec.present).any():
            raise EvalError("vector cannot contain metrics with the same labelset")
        values = np.where(vec.present, vec.values, seen.values)
        by_labels[key] = Vec(seen.labels, values, seen.present | vec.present)
    return list(by_labels.values())


def _instant_order(node: Node, vecs: list[Vec]) -> list[Vec] | None:
    """Return an instant answer in the order Prometheus gives it for sort and topk, or None."""
    if isinstance(node, Call) and node.func in ("sort", "sort_desc"):
        desc = node.func == "sort_desc"
    elif isinstance(node, Aggregate) and node.op in ("topk", "bottomk"):
        desc = node.op == "topk"
    else:
        return None

    def rank(vec: Vec) -> tuple[bool, float]:
        value = float(vec.values[0])
        if np.isnan(value):
            return (True, 0.0)  # NaN last
        return (False, -value if desc else value)

    return sorted(vecs, key=rank)


def run(
    node: Node,
    steps: np.ndarray,
    fetch: Fetch,
    tick: Tick = _no_limit,
    max_points: int | None = None,
) -> Value:
    """Return ``evaluate``'s answer with empty series dropped, sorted as Prometheus answers."""
    value = evaluate(node, steps, fetch, tick, max_points)
    if isinstance(value, np.ndarray):
        return value
    kept = _merged([v for v in value if v.present.any()])
    by_labels = sorted(kept, key=lambda v: label_key(v.labels))
    if steps.size == 1:
        return _instant_order(node, by_labels) or by_labels
    return by_labels


def steps_of(start_ms: int, end_ms: int, step_ms: int) -> np.ndarray:
    """Return Prometheus' evaluation timestamps: start, start+step, ... up to end."""
    count = (end_ms - start_ms) // step_ms + 1
    return start_ms + step_ms * np.arange(count, dtype=np.int64)
