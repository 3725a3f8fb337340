"""Ask every selector of a PromQL expression for one more matcher, where that is safe (pure).

``100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m])))`` keeps each
result's ``instance`` from its inputs, so asking its selector for ``instance=~"a:9100|b:9100"``
answers the same two hosts' series the whole expression would, without the server reading
the fleet's. An expression that drops, rewrites or folds the label (an aggregation without
it, ``label_replace`` onto it, ``on()`` matching without it, ``scalar``, ``absent``) is left
alone: the caller reads it whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import promql_parser as pp

from correlator.promql.plan import (
    Aggregate,
    Binary,
    Call,
    Matrix,
    Negate,
    Number,
    Select,
    String,
    Subquery,
    Unsupported,
    parse_query,
)
from correlator.selector import matcher_text

# Functions whose answer depends on series the matcher would take away, or that make labels.
_FOLDING = frozenset({"absent", "absent_over_time", "scalar"})
_RELABELLING = frozenset({"label_replace", "label_join"})
_WORD = "A-Za-z0-9_:"
# Regex syntax RE2 (the server's) lacks: a mapping's Python regex using it is not pushed.
_PYTHON_ONLY = re.compile(r"\(\?[=!<]|\(\?P=|\\[1-9]")


def carries(node, label: str) -> bool:
    """Return whether every step of a plan keeps ``label`` of its input series unchanged."""
    if isinstance(node, (Number, String, Select, Matrix)):
        return True
    if isinstance(node, (Subquery, Negate)):
        return carries(node.expr, label)
    if isinstance(node, Call):
        if node.func in _FOLDING:
            return False
        if node.func in _RELABELLING:
            target = node.args[1] if len(node.args) > 1 else None
            if not isinstance(target, String) or target.value == label:
                return False
        return all(carries(a, label) for a in node.args)
    if isinstance(node, Aggregate):
        kept = label not in node.labels if node.without else label in node.labels
        if not kept or (isinstance(node.param, String) and node.param.value == label):
            return False  # folded away, or count_values writes the label
        return carries(node.expr, label)
    if isinstance(node, Binary):
        m = node.matching
        if m is not None and ((label in m.labels) != m.on or label in m.include):
            return False  # matched on() without the label, ignoring() it, or copied over
        return carries(node.lhs, label) and carries(node.rhs, label)
    return False


def _walk(expr, selectors: list, strings: list) -> None:
    kind = type(expr).__name__
    if kind == "VectorSelector":
        selectors.append(expr)
        return
    if kind == "StringLiteral":
        strings.append(expr.val)
        return
    if kind == "MatrixSelector":
        selectors.append(expr.vector_selector)
        return
    for part in ("expr", "lhs", "rhs", "param"):
        child = getattr(expr, part, None)
        if child is not None:
            _walk(child, selectors, strings)
    for arg in getattr(expr, "args", None) or ():
        _walk(arg, selectors, strings)


def _parts(tree) -> tuple[list, list[str]]:
    """Return a parsed expression's vector selectors and string literals, in order."""
    selectors: list = []
    strings: list[str] = []
    _walk(tree, selectors, strings)
    return selectors, strings


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """Return a re.sub replacement that inserts ``text`` as it is (no backslash escapes)."""
    return lambda _match: text


def with_matcher(query: str, label: str, op: str, value: str) -> str | None:
    """Return ``query`` with ``label op "value"`` asked of each selector, or None if unsafe."""
    try:
        if not carries(parse_query(query), label):
            return None
        tree = pp.parse(query)
    except (Unsupported, ValueError):
        return None
    selectors, strings = _parts(tree)
    if not selectors or any(vs.matchers.or_matchers for vs in selectors):
        return None
    matcher = matcher_text(label, op, value)
    text = str(tree)
    for head in dict.fromkeys(f"{vs.name or ''}{vs.matchers}" for vs in selectors):
        inner = head[head.index("{") + 1 : -1]
        new = f"{head[: head.index('{')]}{{{inner + ', ' if inner else ''}{matcher}}}"
        text = re.sub(rf"(?<![{_WORD}]){re.escape(head)}", _literal(new), text)
    try:
        got, kept = _parts(pp.parse(text))
    except ValueError:
        return None
    ops = {"=": "Equal", "!=": "NotEqual", "=~": "Re", "!~": "NotRe"}

    def asks(vs) -> bool:
        return any(
            m.name == label and m.value == value and str(m.op).endswith(f".{ops[op]}")
            for m in vs.matchers.matchers
        )

    every = all(asks(vs) for vs in got)
    return text if every and len(got) == len(selectors) and kept == strings else None


def group_regex(pattern: str, wanted: str) -> str | None:
    """Return a regex for source values a one-group label rewrite turns into ``wanted``.

    ``\\[?(.*?)\\]?:[0-9]+`` (host from instance) with ``a|b`` gives
    ``(?:\\[?(?:a|b)\\]?:[0-9]+)|(?:a|b)``: the rewrite's matches, and values it leaves as
    they are. None when the pattern has not exactly one capturing group or uses syntax the
    server's regex engine lacks.
    """
    if _PYTHON_ONLY.search(pattern):
        return None
    spans, stack, i, in_class = [], [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            stack.append((i, not pattern.startswith("?", i + 1)))
        elif ch == ")":
            if not stack:
                return None
            start, capturing = stack.pop()
            if capturing:
                spans.append((start, i + 1))
        i += 1
    if len(spans) != 1 or stack:
        return None
    start, end = spans[0]
    return f"(?:{pattern[:start]}(?:{wanted}){pattern[end:]})|(?:{wanted})"
