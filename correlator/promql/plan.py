"""Parse PromQL with promql-parser into the plan causeline evaluates (Prometheus 2.42's language).

Anything outside it raises ``Unsupported`` naming the part, so the API can answer as
Prometheus does (``bad_data``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import promql_parser as pp

from correlator.promql.scan import ShapeError, check_shape
from correlator.promql.vector_functions import DATES, MATH
from correlator.selector import Selector, SelectorError, parse_selector

MAX_QUERY_CHARS = 10_000
MAX_DURATION_MS = 10 * 365 * 86_400_000  # a range, offset or step: at most 10y (PromQL's y: 365d)
AGGREGATIONS = (
    "sum",
    "avg",
    "max",
    "min",
    "count",
    "group",
    "stddev",
    "stdvar",
    "topk",
    "bottomk",
    "quantile",
    "count_values",
)
ARITHMETIC = ("+", "-", "*", "/", "%", "^", "atan2")
COMPARISON = ("==", "!=", ">", "<", ">=", "<=")
SET_OPERATORS = ("and", "or", "unless")
# Functions of Prometheus 2.42 that causeline evaluates (histogram_* of native histograms
# are not: the store holds classic histograms).
RANGE_FUNCTIONS = frozenset(
    {
        "rate",
        "irate",
        "increase",
        "delta",
        "idelta",
        "deriv",
        "predict_linear",
        "holt_winters",  # Prometheus 3's double_exponential_smoothing
        "changes",
        "resets",
        "avg_over_time",
        "min_over_time",
        "max_over_time",
        "sum_over_time",
        "count_over_time",
        "quantile_over_time",
        "stddev_over_time",
        "stdvar_over_time",
        "last_over_time",
        "present_over_time",
        "absent_over_time",
    }
)
VECTOR_FUNCTIONS = (
    frozenset(
        {
            "absent",
            "clamp",
            "clamp_max",
            "clamp_min",
            "histogram_quantile",
            "label_join",
            "label_replace",
            "round",
            "scalar",
            "sort",
            "sort_desc",
            "timestamp",
            "vector",
            "time",
            "pi",
        }
    )
    | frozenset(MATH)  # abs, ceil, exp, ln, trigonometry...: vector_functions.MATH
    | frozenset(DATES)
)
_OPS = {"MatchOp.Equal": "=", "MatchOp.NotEqual": "!=", "MatchOp.Re": "=~", "MatchOp.NotRe": "!~"}
_AT_TIME = re.compile(r"@ (-?[0-9.]+)")
_NEGATIVE_AT = re.compile(r"@\s*-")


# promql-parser knows holt_winters by its Prometheus 3 name only: the query's word is renamed
# before parsing (outside string literals) and back after.
HOLT_WINTERS = {"double_exponential_smoothing": "holt_winters"}
_HOLT = re.compile(r"\bholt_winters(\s*\()")
_QUOTED = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`""", re.S)


def _renamed(text: str) -> str:
    """Return the query with holt_winters( as double_exponential_smoothing(, strings kept."""
    if "holt_winters" not in text:
        return text
    out, at = [], 0
    for quoted in _QUOTED.finditer(text):
        out.append(_HOLT.sub(r"double_exponential_smoothing\1", text[at : quoted.start()]))
        out.append(quoted.group(0))
        at = quoted.end()
    out.append(_HOLT.sub(r"double_exponential_smoothing\1", text[at:]))
    return "".join(out)


class Unsupported(ValueError):
    """A query causeline cannot answer; the message names the part."""


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class String:
    value: str


@dataclass(frozen=True)
class Select:
    """An instant vector selector; ``at``: a fixed time (ms), "start", "end" or None."""

    selector: Selector
    offset_ms: int
    at: int | str | None = None


@dataclass(frozen=True)
class Matrix:
    """A range vector selector ``x[5m]``."""

    select: Select
    range_ms: int


@dataclass(frozen=True)
class Subquery:
    """``expr[range:step]``: the expression at each step of a range, read as a range vector."""

    expr: Node
    range_ms: int
    step_ms: int  # 0: the default step
    offset_ms: int
    at: int | str | None = None


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Aggregate:
    op: str
    labels: tuple[str, ...]
    without: bool
    expr: Node
    param: Node | None = None


@dataclass(frozen=True)
class Matching:
    """How a binary operator pairs two vectors' series (Prometheus' VectorMatching)."""

    card: str  # one-to-one, many-to-one, one-to-many, many-to-many
    on: bool
    labels: tuple[str, ...]
    include: tuple[str, ...] = ()


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: Node
    rhs: Node
    matching: Matching | None = None  # None unless both sides are vectors
    bool: bool = False


@dataclass(frozen=True)
class Negate:
    expr: Node


Node = Number | String | Select | Matrix | Subquery | Call | Aggregate | Binary | Negate


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


def _at(at) -> int | str | None:
    """Return an @ modifier as ms, "start" or "end" (read from its text: the binding's
    time field panics on a time before 1970)."""
    if at is None:
        return None
    kind = str(at.type)
    if kind.endswith("Start"):
        return "start"
    if kind.endswith("End"):
        return "end"
    found = _AT_TIME.fullmatch(str(at))
    if found is None:
        raise Unsupported(f"cannot read the @ modifier {str(at)!r}")
    return round(float(found.group(1)) * 1000)


def _selector(vs) -> Select:
    if vs.matchers.or_matchers:
        raise Unsupported("'or' inside a selector's braces is not supported")
    name = vs.name
    parts = []
    for m in vs.matchers.matchers:
        op = _OPS.get(str(m.op))
        if op is None:
            raise Unsupported(f"matcher operator {m.op} is not supported")
        if m.name == "__name__" and op == "=" and name in (None, m.value):
            name = m.value
            continue
        parts.append(f'{m.name}{op}"{_quote(m.value)}"')
    text = f"{name or ''}{{{','.join(parts)}}}"
    try:
        selector = parse_selector(text)
    except SelectorError as exc:
        raise Unsupported(str(exc)) from exc
    offset = _ms(lambda: vs.offset, f"offset of {name or 'the selector'}")
    return Select(selector, offset, _at(vs.at))


def _convert(expr) -> Node:
    kind = type(expr).__name__
    if kind == "ParenExpr":
        return _convert(expr.expr)
    if kind == "NumberLiteral":
        return Number(float(expr.val))
    if kind == "StringLiteral":
        return String(expr.val)
    if kind == "VectorSelector":
        return _selector(expr)
    if kind == "MatrixSelector":
        return Matrix(_selector(expr.vector_selector), _ms(lambda: expr.range, "range"))
    if kind == "SubqueryExpr":
        return Subquery(
            _convert(expr.expr),
            _ms(lambda: expr.range, "subquery range"),
            _ms(lambda: expr.step, "subquery step"),
            _ms(lambda: expr.offset, "subquery offset"),
            _at(expr.at),
        )
    if kind == "UnaryExpr":
        return Negate(_convert(expr.expr))
    if kind == "Call":
        return _call(expr)
    if kind == "AggregateExpr":
        return _aggregate(expr)
    if kind == "BinaryExpr":
        return _binary(expr)
    raise Unsupported(f"{kind} expressions are not supported")


def _call(expr) -> Node:
    name = HOLT_WINTERS.get(expr.func.name, expr.func.name)
    if name not in RANGE_FUNCTIONS and name not in VECTOR_FUNCTIONS:
        why = (
            "native histograms are not stored"
            if name.startswith("histogram_")
            else "it is not in Prometheus 2.42's PromQL"
        )
        raise Unsupported(
            f"function {name}() is not supported ({why}; docs/prometheus.md lists the functions)"
        )
    return Call(name, tuple(_convert(a) for a in expr.args))


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
    param = _convert(expr.param) if expr.param is not None else None
    return Aggregate(op, labels, without, _convert(expr.expr), param)


def is_scalar(node: Node) -> bool:
    """Return whether a node gives a scalar (a number at each step), not a vector."""
    if isinstance(node, Number):
        return True
    if isinstance(node, Negate):
        return is_scalar(node.expr)
    if isinstance(node, Binary):
        return is_scalar(node.lhs) and is_scalar(node.rhs)
    if isinstance(node, Call):
        return node.func in ("scalar", "time", "pi")
    return False


def _binary(expr) -> Node:
    op = str(expr.op)
    if op not in ARITHMETIC + COMPARISON + SET_OPERATORS:
        raise Unsupported(f"binary operator {op} is not supported")
    lhs, rhs = _convert(expr.lhs), _convert(expr.rhs)
    modifier = expr.modifier
    returns_bool = bool(modifier is not None and modifier.return_bool)
    if is_scalar(lhs) or is_scalar(rhs):
        return Binary(op, lhs, rhs, None, returns_bool)
    card, on, labels, include = "one-to-one", False, (), ()
    if modifier is not None:
        card = {
            "ManyToOne": "many-to-one",
            "OneToMany": "one-to-many",
            "ManyToMany": "many-to-many",
        }.get(str(modifier.card).rpartition(".")[2], "one-to-one")
        if modifier.matching is not None:
            on = str(modifier.matching.type).endswith("Include")
            labels = tuple(modifier.matching.labels)
        include = tuple(modifier.group_labels or ())
    if op in SET_OPERATORS:
        card = "many-to-many"
    return Binary(op, lhs, rhs, Matching(card, on, labels, include), returns_bool)


def scalar_op(op: str, a, b):
    """Return ``a op b`` for floats or numpy arrays, with Go's float semantics.

    Comparisons give 1.0 or 0.0 (as between two scalars with ``bool``).
    """
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
        elif op == "^":
            out = np.power(a, b)
        elif op == "atan2":
            out = np.arctan2(a, b)
        else:
            out = compare(op, a, b).astype(np.float64)
    return float(out) if np.ndim(out) == 0 else out


def compare(op: str, a, b) -> np.ndarray:
    """Return where ``a op b`` holds for a comparison operator."""
    with np.errstate(invalid="ignore"):
        if op == "==":
            return np.asarray(a == b)
        if op == "!=":
            return np.asarray(a != b)
        if op == ">":
            return np.asarray(a > b)
        if op == "<":
            return np.asarray(a < b)
        if op == ">=":
            return np.asarray(a >= b)
        return np.asarray(a <= b)


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
        expr = pp.parse(_renamed(text))
    except ValueError as exc:
        raise Unsupported(f"cannot parse the query: {exc}") from exc
    if "@" in text and _NEGATIVE_AT.search(text):
        raise Unsupported("an @ modifier before 1970 (a negative time) is not supported")
    try:
        plan = _convert(expr)
    except RecursionError as exc:  # unreachable within the shape bounds; never a 500
        raise Unsupported("the query is nested too deeply") from exc
    if isinstance(plan, Matrix | Subquery):
        raise Unsupported(
            "a range vector is not supported as the result: wrap it in a function, "
            "as rate(x[5m]), or read raw samples with /api/v1/query_range?match=..."
        )
    if isinstance(plan, String):
        raise Unsupported("a string is not supported as the result")
    return plan
