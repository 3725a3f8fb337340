"""PromQL's binary operators on values: arithmetic, comparisons and set operators.

Between two vectors, series are paired by their matching labels (``on``/``ignoring``), one
to one or many to one (``group_left``/``group_right``), as Prometheus 2.42's VectorBinop,
VectorAnd/Or/Unless do at each step; the pairing is worked out once per series pair and
applied to all steps at once.
"""

from __future__ import annotations

import numpy as np

from correlator.promql.plan import COMPARISON, SET_OPERATORS, Binary, Matching, compare, scalar_op
from correlator.promql.values import NAME, EvalError, Tick, Value, Vec, label_key, without_name

_DROPS_NAME = ("+", "-", "*", "/", "%", "^")  # arithmetic (atan2 keeps it, as in 2.42)


def apply(node: Binary, lhs: Value, rhs: Value, tick: Tick) -> Value:
    """Return ``lhs op rhs`` for scalars and vectors."""
    if isinstance(lhs, np.ndarray) and isinstance(rhs, np.ndarray):
        return scalar_op(node.op, lhs, rhs)
    if isinstance(lhs, np.ndarray):
        assert not isinstance(rhs, np.ndarray)
        return _with_scalar(node, rhs, lhs, scalar_left=True)
    if isinstance(rhs, np.ndarray):
        return _with_scalar(node, lhs, rhs, scalar_left=False)
    matching = node.matching or Matching("one-to-one", False, ())
    if node.op in SET_OPERATORS:
        return _set_operation(node.op, lhs, rhs, matching)
    return _vectors(node, lhs, rhs, matching, tick)


def _with_scalar(node: Binary, vecs: list[Vec], scalar: np.ndarray, scalar_left: bool) -> list[Vec]:
    out = []
    for vec in vecs:
        left, right = (scalar, vec.values) if scalar_left else (vec.values, scalar)
        if node.op in COMPARISON:
            holds = compare(node.op, left, right)
            if node.bool:
                out.append(Vec(without_name(vec.labels), holds.astype(float), vec.present))
            else:  # a filter: the vector's own value where the comparison holds
                out.append(Vec(vec.labels, vec.values, vec.present & holds))
        else:
            labels = without_name(vec.labels) if node.op in _DROPS_NAME else vec.labels
            out.append(Vec(labels, scalar_op(node.op, left, right), vec.present))
    return out


def signature(labels: dict[str, str], matching: Matching) -> tuple:
    """Return the labels two series must share to be paired."""
    if matching.on:
        return tuple((name, labels.get(name, "")) for name in matching.labels)
    ignored = {*matching.labels, NAME}
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ignored))


def _by_signature(vecs: list[Vec], matching: Matching) -> dict[tuple, list[Vec]]:
    groups: dict[tuple, list[Vec]] = {}
    for vec in vecs:
        groups.setdefault(signature(vec.labels, matching), []).append(vec)
    return groups


def _present_any(groups: dict[tuple, list[Vec]]) -> dict[tuple, np.ndarray]:
    """Return, per signature, the steps where any of its series is present."""
    return {sig: np.logical_or.reduce([v.present for v in vecs]) for sig, vecs in groups.items()}


def _set_operation(op: str, lhs: list[Vec], rhs: list[Vec], matching: Matching) -> list[Vec]:
    if op == "or":
        left = _present_any(_by_signature(lhs, matching))
        out = list(lhs)
        for vec in rhs:
            taken = left.get(signature(vec.labels, matching))
            out.append(vec if taken is None else Vec(vec.labels, vec.values, vec.present & ~taken))
        return out
    right = _present_any(_by_signature(rhs, matching))
    out = []
    for vec in lhs:
        there = right.get(signature(vec.labels, matching))
        if op == "and":
            if there is not None:
                out.append(Vec(vec.labels, vec.values, vec.present & there))
        else:  # unless
            out.append(vec if there is None else Vec(vec.labels, vec.values, vec.present & ~there))
    return out


def _result_labels(many: dict[str, str], one: dict[str, str], node: Binary) -> dict[str, str]:
    """Return a pair's labels as Prometheus' resultMetric builds them."""
    matching = node.matching
    assert matching is not None
    labels = dict(many)
    if node.op in _DROPS_NAME or node.bool:
        labels.pop(NAME, None)
    if matching.card == "one-to-one":
        if matching.on:
            labels = {k: v for k, v in labels.items() if k in matching.labels}
        else:
            for name in matching.labels:
                labels.pop(name, None)
    for name in matching.include:  # group_x(labels): taken from the "one" side
        if one.get(name, ""):
            labels[name] = one[name]
        else:
            labels.pop(name, None)
    return labels


ONE_TO_ONE_TWICE = (
    "multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)"
)
GROUPED_TWICE = "multiple matches for matching labels: grouping labels must ensure unique matches"


def _take(taken: dict[tuple, np.ndarray], key: tuple, present: np.ndarray, error: str) -> None:
    """Mark the steps ``key`` has a result at; EvalError where it had one there already."""
    seen = taken.get(key)
    if seen is not None and (seen & present).any():
        raise EvalError(error)
    taken[key] = present if seen is None else seen | present


def _vectors(
    node: Binary, lhs: list[Vec], rhs: list[Vec], matching: Matching, tick: Tick
) -> list[Vec]:
    swapped = matching.card == "one-to-many"
    many, one = (rhs, lhs) if swapped else (lhs, rhs)
    one_side = _by_signature(one, matching)
    for sig, members in one_side.items():
        if len(members) > 1 and (np.sum([m.present for m in members], axis=0) > 1).any():
            side = "left" if swapped else "right"
            raise EvalError(
                f"found duplicate series for the match group {dict(sig)} on the {side} hand-side "
                "of the operation; many-to-many matching not allowed: matching labels must be "
                "unique on one side"
            )
    out: list[Vec] = []
    taken: dict[tuple, np.ndarray] = {}  # the steps each match (one-to-one) or result has
    for vec in many:
        tick()
        sig = signature(vec.labels, matching)
        for partner in one_side.get(sig, ()):
            both = vec.present & partner.present
            if not both.any():
                continue
            left, right = (partner.values, vec.values) if swapped else (vec.values, partner.values)
            if node.op in COMPARISON:
                holds = compare(node.op, left, right)
                values = holds.astype(float) if node.bool else left
                present = both if node.bool else both & holds
            else:
                values, present = scalar_op(node.op, left, right), both
            labels = _result_labels(vec.labels, partner.labels, node)
            if matching.card == "one-to-one":
                _take(taken, sig, present, ONE_TO_ONE_TWICE)
            else:
                _take(taken, (sig, label_key(labels)), present, GROUPED_TWICE)
            out.append(Vec(labels, np.where(present, values, np.nan), present))
    return out
