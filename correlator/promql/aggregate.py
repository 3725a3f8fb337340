"""PromQL's aggregation operators over a vector's series, at every step at once.

Series are taken in their label order and folded as Prometheus 2.42's ``aggregation`` folds
them (a running mean for avg, Welford's update for stddev and stdvar), so sums of many
series give the same floats.
"""

from __future__ import annotations

import numpy as np

from correlator.promql.encode import sample_text
from correlator.promql.plan import Aggregate
from correlator.promql.values import NAME, EvalError, Tick, Vec, label_key

TICK_EVERY = 1024
_LABEL_NAME = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"


def group_key(labels: dict[str, str], node: Aggregate) -> tuple:
    """Return the labels a series is grouped by (``by``), or keeps (``without``)."""
    if node.without:
        drop = {*node.labels, NAME}
        kept = {k: v for k, v in labels.items() if k not in drop}
    else:
        kept = {k: labels[k] for k in node.labels if labels.get(k, "") != ""}
    return tuple(sorted(kept.items()))


def apply(node: Aggregate, vecs: list[Vec], param, tick: Tick) -> list[Vec]:
    """Return the aggregation of ``vecs``; ``param``: topk's k, quantile's φ, a label name."""
    if node.op == "count_values":
        return _count_values(node, vecs, param, tick)
    groups: dict[tuple, list[Vec]] = {}
    for vec in sorted(vecs, key=lambda v: label_key(v.labels)):
        groups.setdefault(group_key(vec.labels, node), []).append(vec)
    out: list[Vec] = []
    for key, members in groups.items():
        tick()
        values = np.stack([m.values for m in members])
        present = np.stack([m.present for m in members])
        if node.op in ("topk", "bottomk"):
            out += _top(node.op == "topk", members, values, present, param)
            continue
        count = present.sum(axis=0)
        result = _fold(node.op, values, present, count, param, tick)
        any_present = count > 0
        out.append(Vec(dict(key), np.where(any_present, result, np.nan), any_present))
    return out


def _fold(op: str, values: np.ndarray, present: np.ndarray, count: np.ndarray, param, tick: Tick):
    with np.errstate(all="ignore"):
        if op == "count":
            return count.astype(float)
        if op == "group":
            return np.ones(values.shape[1])
        if op == "sum":
            return np.where(present, values, 0.0).sum(axis=0)  # row by row, in order
        if op == "avg":
            return running_mean(values, present)
        if op in ("stddev", "stdvar"):
            variance = _welford(values, present)
            return np.sqrt(variance) if op == "stddev" else variance
        if op == "quantile":
            return _quantile(values, present, param, tick)
        fill = -np.inf if op == "max" else np.inf
        pick = np.fmax if op == "max" else np.fmin
        result = pick.reduce(np.where(present, values, fill), axis=0)
        all_nan = (np.isnan(values) | ~present).all(axis=0)
        return np.where(all_nan, np.nan, result)


def running_mean(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Return each step's mean of the present rows as Prometheus 2.x keeps it: a running mean.

    Each value moves the mean by ``v/n - mean/n``, so values near the float64 limit do not
    overflow a sum; an infinite mean stays unless a NaN or an opposite infinity comes.
    """
    mean = np.full(values.shape[1], np.nan)
    count = np.zeros(values.shape[1])
    for row, here in zip(values, present, strict=True):
        first = here & (count == 0)
        count += here
        mean[first] = row[first]
        move = here & ~first
        keep_inf = np.isinf(mean) & (
            (np.isinf(row) & (np.sign(row) == np.sign(mean))) | np.isfinite(row)
        )
        move &= ~keep_inf
        mean[move] += row[move] / count[move] - mean[move] / count[move]
    return mean


def _welford(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Return each step's population variance of the present rows, updated as Prometheus."""
    mean = np.zeros(values.shape[1])
    total = np.zeros(values.shape[1])
    count = np.zeros(values.shape[1])
    for row, here in zip(values, present, strict=True):
        count += here
        delta = np.where(here, row - mean, 0.0)
        mean = np.where(here, mean + delta / np.maximum(count, 1), mean)
        total = np.where(here, total + delta * (row - mean), total)
    return total / np.maximum(count, 1)


def quantile_of(phi: float, values: np.ndarray) -> float:
    """Return the φ-quantile of values as Prometheus' ``quantile``: linear between ranks."""
    if values.size == 0:
        return np.nan
    if phi < 0:
        return -np.inf
    if phi > 1:
        return np.inf
    if np.isnan(phi):
        return np.nan
    ordered = np.sort(values)
    rank = phi * (ordered.size - 1)
    lower = max(0, int(np.floor(rank)))
    upper = min(ordered.size - 1, lower + 1)
    weight = rank - np.floor(rank)
    return float(ordered[lower] * (1 - weight) + ordered[upper] * weight)


def _quantile(values: np.ndarray, present: np.ndarray, phi: np.ndarray, tick: Tick) -> np.ndarray:
    out = np.full(values.shape[1], np.nan)
    for i in range(values.shape[1]):
        if i % TICK_EVERY == 0:
            tick()  # a step at a time: the deadline is checked as it goes
        here = values[present[:, i], i]
        if here.size:
            out[i] = quantile_of(float(phi[i]), here)
    return out


def _top(
    top: bool, members: list[Vec], values: np.ndarray, present: np.ndarray, k: np.ndarray
) -> list[Vec]:
    """Return the members at each step among its k highest (topk) or lowest (bottomk)."""
    # NaN ranks last either way; absent members after everything.
    key = np.where(np.isnan(values), np.inf, -values if top else values)
    key = np.where(present, key, np.nan)
    order = np.argsort(key, axis=0, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(len(members))[:, None], axis=0)
    wanted = np.where(np.isnan(k), 0, np.clip(k, 0, len(members))).astype(np.int64)
    chosen = present & (rank < wanted[None, :])
    return [
        Vec(m.labels, np.where(chosen[i], m.values, np.nan), chosen[i])
        for i, m in enumerate(members)
        if chosen[i].any()
    ]


def _count_values(node: Aggregate, vecs: list[Vec], label, tick: Tick) -> list[Vec]:
    """Return, per group and step, how many series have each value, the value as a label."""
    if not isinstance(label, str) or not label or label[0] not in _LABEL_NAME:
        raise EvalError(f"invalid label name {label!r} for count_values")
    if not all(c.isascii() and (c.isalnum() or c == "_") for c in label):
        raise EvalError(f"invalid label name {label!r} for count_values")
    counts: dict[tuple, np.ndarray] = {}
    size = vecs[0].values.size if vecs else 0
    for vec in vecs:
        tick()
        base = dict(group_key(vec.labels, node))
        for i in np.flatnonzero(vec.present):
            labels = {**base, label: sample_text(float(vec.values[i]))}
            key = tuple(sorted(labels.items()))
            if key not in counts:
                counts[key] = np.zeros(size)
            counts[key][i] += 1
    return [Vec(dict(key), np.where(c > 0, c, np.nan), c > 0) for key, c in counts.items()]
