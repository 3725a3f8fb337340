"""Parse PromQL with promql-parser and keep only the subset causeline evaluates.

Anything outside it raises ``Unsupported`` naming the part, so the API can answer as
Prometheus does (``bad_data``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import promql_parser as pp

from correlator.promql.scan import ShapeError, check_shape
from correlator.selector import Selector, SelectorError, parse_selector

MAX_QUERY_CHARS = 10_000
MAX_DURATION_MS = 10 * 365 * 86_400_000  # a range, offset or step: at most 10y (PromQL's y: 365d)
RANGE_FUNCTIONS = ("rate", "irate", "increase")
AGGREGATIONS = ("sum", "avg", "max", "min", "count")
ARITHMETIC = ("+", "-", "*", "/", "%", "^")
_OPS = {"MatchOp.Equal": "=", "MatchOp.NotEqual": "!=", "MatchOp.Re": "=~", "MatchOp.NotRe": "!~"}


class Unsupported(ValueError):
    """A query causeline cannot answer; the message names the part."""


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Select:
    selector: Selector
    offset_ms: int
    range_ms: int | None = None  # None: an instant vector selector


@dataclass(frozen=True)
class RangeCall:
    func: str
    arg: Select


@dataclass(frozen=True)
class Aggregate:
    op: str
    labels: tuple[str, ...]
    without: bool
    expr: Node


@dataclass(frozen=True)
class Quantile:
    phi: float
    expr: Node


@dataclass(frozen=True)
class Arith:
    op: str
    lhs: Node
    rhs: Node


@dataclass(frozen=True)
class Negate:
    expr: Node


Node = Number | Select | RangeCall | Aggregate | Quantile | Arith | Negate


def _ms(read, part: str) -> int:
    """Return a duration of the parsed query in ms, within MAX_DURATION_MS; refuse one past it."""
    try:
        delta: timedelta | None = read()
    except (ValueError, OverflowError) as exc:
        raise Unsupported(f"the {part} is too large: {exc} (at most 10y)") from exc
    if delta is None:
        return 0
    ms = round(delta.total_seconds() * 1000)
    if abs(ms) > MAX_DURATION_MS:
        raise Unsupported(f"the {part} {delta} is longer than 10y")
    return ms


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _selector(vs) -> Select:
    if vs.at is not None:
        raise Unsupported("the @ modifier is not supported")
    if vs.matchers.or_matchers:
        raise Unsupported("'or' inside a selector's braces is not supported")
    name = vs.name
    parts = []
    for m in vs.matchers.matchers:
        op = _OPS.get(str(m.op))
        if op is None:
            raise Unsupported(f"matcher operator {m.op} is not supported")
        if m.name == "__name__":
            if op != "=" or (name is not None and name != m.value):
                raise Unsupported('__name__ matchers other than __name__="..." are not supported')
            name = m.value
            continue
        parts.append(f'{m.name}{op}"{_quote(m.value)}"')
    text = f"{name or ''}{{{','.join(parts)}}}"
    try:
        selector = parse_selector(text)
    except SelectorError as exc:
        raise Unsupported(str(exc)) from exc
    offset = _ms(lambda: vs.offset, f"offset of {name or 'the selector'}")
    return Select(selector, offset)


def _is_scalar(node: Node) -> bool:
    if isinstance(node, Number):
        return True
    if isinstance(node, Negate):
        return _is_scalar(node.expr)
    if isinstance(node, Arith):
        return _is_scalar(node.lhs) and _is_scalar(node.rhs)
    return False


def _convert(expr) -> Node:
    kind = type(expr).__name__
    if kind == "ParenExpr":
        return _convert(expr.expr)
    if kind == "NumberLiteral":
        return Number(float(expr.val))
    if kind == "VectorSelector":
        return _selector(expr)
    if kind == "UnaryExpr":
        return Negate(_convert(expr.expr))
    if kind == "Call":
        return _call(expr)
    if kind == "AggregateExpr":
        return _aggregate(expr)
    if kind == "BinaryExpr":
        return _binary(expr)
    if kind == "MatrixSelector":
        raise Unsupported("a range vector can only be the argument of rate, irate or increase")
    if kind == "SubqueryExpr":
        raise Unsupported("subqueries are not supported")
    if kind == "StringLiteral":
        raise Unsupported("string literals are not supported")
    raise Unsupported(f"{kind} expressions are not supported")


def _call(expr) -> Node:
    name = expr.func.name
    args = list(expr.args)
    if name in RANGE_FUNCTIONS:
        if len(args) != 1 or type(args[0]).__name__ != "MatrixSelector":
            raise Unsupported(f"{name} needs one range vector selector, as {name}(x[5m])")
        sel = _selector(args[0].vector_selector)
        arg = Select(sel.selector, sel.offset_ms, _ms(lambda: args[0].range, f"range of {name}()"))
        return RangeCall(name, arg)
    if name == "histogram_quantile":
        phi = _convert(args[0])
        if not _is_scalar(phi):
            raise Unsupported("histogram_quantile needs a number as its first argument")
        return Quantile(_constant(phi), _convert(args[1]))
    supported = ", ".join([*RANGE_FUNCTIONS, "histogram_quantile"])
    raise Unsupported(f"function {name}() is not supported (supported: {supported})")


def _aggregate(expr) -> Node:
    op = str(expr.op)
    if op not in AGGREGATIONS:
        raise Unsupported(
            f"aggregation {op} is not supported (supported: {', '.join(AGGREGATIONS)})"
        )
    modifier = expr.modifier
    labels: tuple[str, ...] = ()
    without = False
    if modifier is not None:
        labels = tuple(modifier.labels)
        without = str(modifier.type).endswith("Without")
    return Aggregate(op, labels, without, _convert(expr.expr))


def _binary(expr) -> Node:
    op = str(expr.op)
    if op not in ARITHMETIC:
        raise Unsupported(f"binary operator {op} is not supported (only + - * / % ^)")
    lhs, rhs = _convert(expr.lhs), _convert(expr.rhs)
    if not (_is_scalar(lhs) or _is_scalar(rhs)):
        raise Unsupported("binary operations between two vectors are not supported")
    if expr.modifier is not None and getattr(expr.modifier, "return_bool", False):
        raise Unsupported("the bool modifier is not supported")
    return Arith(op, lhs, rhs)


def _constant(node: Node) -> float:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Negate):
        return -_constant(node.expr)
    assert isinstance(node, Arith)
    return scalar_op(node.op, _constant(node.lhs), _constant(node.rhs))


def scalar_op(op: str, a, b):
    """Return ``a op b`` for floats or numpy arrays, with Go's float semantics."""

    with np.errstate(all="ignore"):
        a, b = (
            np.float64(a) if isinstance(a, float) else a,
            np.float64(b) if isinstance(b, float) else b,
        )
        if op == "+":
            out = a + b
        elif op == "-":
            out = a - b
        elif op == "*":
            out = a * b
        elif op == "/":
            out = np.true_divide(a, b)
        elif op == "%":
            out = np.fmod(a, b)
        else:
            out = np.power(a, b)
    return float(out) if np.ndim(out) == 0 else out


def parse_query(text: str) -> Node:
    """Return the plan of a query; raise Unsupported for a bad or unsupported one."""
    if len(text) > MAX_QUERY_CHARS:
        raise Unsupported(f"the query is longer than {MAX_QUERY_CHARS} characters")
    if not text.strip():
        raise Unsupported("the query is empty")
    try:
        check_shape(text)  # before the native parser, whose stack a deep query overflows
    except ShapeError as exc:
        raise Unsupported(str(exc)) from exc
    try:
        expr = pp.parse(text)
    except ValueError as exc:
        raise Unsupported(f"cannot parse the query: {exc}") from exc
    try:
        return _convert(expr)
    except RecursionError as exc:  # unreachable within the shape bounds; never a 500
        raise Unsupported("the query is nested too deeply") from exc
