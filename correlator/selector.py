"""PromQL-style series selectors: ``name{label="v", other=~"re.*", x!="y"}``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import re2

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
NAME = "__name__"  # the metric name, as a matcher's label
# Compiled regexes get at most this much memory; a bigger one is refused as too large.
REGEX_MAX_MEM = 8 << 20


class SelectorError(ValueError):
    """A selector that cannot be parsed; the message says where."""


@dataclass(frozen=True)
class Matcher:
    """One label matcher."""

    label: str
    op: str
    value: str
    pattern: re2._Regexp | None = field(default=None, compare=False)  # RE2: linear time

    def matches(self, labels: dict[str, str]) -> bool:
        """Return whether the labels satisfy this matcher (absent label reads as "")."""
        actual = labels.get(self.label, "")
        if self.op == "=":
            return actual == self.value
        if self.op == "!=":
            return actual != self.value
        assert self.pattern is not None  # compiled for every regex matcher (matcher())
        hit = self.pattern.fullmatch(actual) is not None
        return hit if self.op == "=~" else not hit


@dataclass(frozen=True)
class Selector:
    """A metric name (optional) and label matchers."""

    name: str | None = None
    matchers: tuple[Matcher, ...] = ()

    @property
    def reads_name(self) -> bool:
        """Return whether a matcher tests the metric name (``{__name__=~"vllm:.*"}``)."""
        return any(m.label == NAME for m in self.matchers)

    def matches(self, name: str, labels: dict[str, str]) -> bool:
        """Return whether a series is selected."""
        if self.name is not None and name != self.name:
            return False
        if self.reads_name:
            labels = with_name(name, labels)
        return all(m.matches(labels) for m in self.matchers)

    def cheapest_first(self) -> tuple[Matcher, ...]:
        """Return the matchers, exact ones first, then regexes by their compiled size."""
        return tuple(sorted(self.matchers, key=_cost))

    def promql(self) -> str:
        """Return the selector as PromQL text (values quoted and escaped)."""
        body = ",".join(matcher_text(m.label, m.op, m.value) for m in self.matchers)
        return f"{self.name or ''}{{{body}}}" if body else str(self.name)


def with_name(name: str, labels: dict[str, str]) -> dict[str, str]:
    """Return the labels with the metric name as ``__name__``, for matchers that test it."""
    return {**labels, NAME: name}


def _cost(matcher: Matcher) -> int:
    """Return a matcher's cost to run: 0 for an exact one, else its RE2 program size."""
    return 0 if matcher.pattern is None else 1 + matcher.pattern.programsize


def matcher_text(label: str, op: str, value: str) -> str:
    """Return one label matcher as PromQL text: ``label op "value"``, the value escaped."""
    quoted = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'{label}{op}"{quoted}"'


def _unescape(match: re.Match) -> str:
    code = match.group(1)
    if code[0] in "xuU" and len(code) > 1:
        point = int(code[1:], 16)
        if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:  # as Go's strconv: no such character
            raise SelectorError(f"invalid escape \\{code}: not a Unicode character")
        return chr(point)
    if code[0] in "01234567":
        return chr(int(code, 8))
    if code in _SIMPLE:
        return _SIMPLE[code]
    return code if code in "\\\"'" else "\\" + code  # unknown escapes stay, as in regexes


def _compile_regex(label: str, value: str) -> re2._Regexp:
    """Compile a matcher's regex with RE2, whose matching time is linear in the text."""
    options = re2.Options()
    options.log_errors = False
    options.max_mem = REGEX_MAX_MEM
    try:
        return re2.compile(value, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else reason
        raise SelectorError(f"bad regular expression for {label}: {reason}") from exc


def _matcher(label: str, op: str, value: str) -> Matcher:
    value = _ESCAPE.sub(_unescape, value) if "\\" in value else value
    pattern = _compile_regex(label, value) if op in ("=~", "!~") else None
    return Matcher(label, op, value, pattern)


def parse_selector(text: str) -> Selector:
    """Parse a selector such as ``model_latency_p99_ms{model="m1"}``."""
    text = text.strip()
    match = re.fullmatch(rf"({_NAME})?\s*(?:\{{(.*)\}})?", text, flags=re.S)
    if not text or match is None:
        raise SelectorError(f'cannot parse selector {text!r}; expected name{{label="value"}}')
    name, body = match.group(1), match.group(2)
    matchers = []
    pos = 0
    body = (body or "").strip()
    while pos < len(body):
        m = _MATCHER.match(body, pos)
        if m is None:
            raise SelectorError(f"cannot parse label matcher at {body[pos:]!r}")
        matcher = _matcher(m.group(1), m.group(2), m.group(3))
        if matcher.label == NAME and matcher.op == "=" and name is None:
            name = matcher.value  # {__name__="x"} is the selector x
        else:
            matchers.append(matcher)
        pos = m.end()
    if name is None and all(m.matches({}) for m in matchers):
        # As Prometheus: a selector every series would match is refused, not read whole.
        raise SelectorError(
            "a selector needs a metric name or a matcher that does not match the empty "
            'string, e.g. {job="node"} or {__name__=~"vllm:.*"}'
        )
    return Selector(name=name, matchers=tuple(matchers))


def selector_from_labels(name: str | None, labels: dict[str, str]) -> Selector:
    """Return the selector of a name and exact label values."""
    return Selector(name=name, matchers=tuple(Matcher(k, "=", v) for k, v in labels.items()))
