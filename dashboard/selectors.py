"""Series selector text: build one from label values (escaped) and read one back."""

from __future__ import annotations

import re

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
_ESCAPED = re.compile(r"\\(.)", re.S)
MAX_SELECTOR = 1000


def quote(value: str) -> str:
    """Return a label value as the inside of a double-quoted selector string."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _regex(values: list[str]) -> str:
    """Return an ``=~`` value matching exactly these values (regex characters escaped)."""
    return "|".join(quote(re.escape(v)) for v in values)


def selector(metric: str | None, labels: dict[str, list[str]]) -> str:
    """Return a selector for a metric with each label matching one of the given values."""
    parts = []
    for key, given in sorted(labels.items()):
        values = sorted({str(v) for v in given or [] if v is not None})
        if len(values) == 1:
            parts.append(f'{key}="{quote(values[0])}"')
        elif values:
            parts.append(f'{key}=~"{_regex(values)}"')
    return f"{metric or ''}{{{','.join(parts)}}}"


def exact(metric: str | None, labels: dict[str, str]) -> str:
    """Return the selector of a metric and exact label values."""
    return selector(metric, {k: [v] for k, v in labels.items() if v is not None})


def read(text: str) -> tuple[str | None, dict[str, str]]:
    """Return a selector's metric name and its ``=`` label values; ValueError when malformed."""
    text = (text or "").strip()
    if not text or len(text) > MAX_SELECTOR:
        raise ValueError(f"a selector is 1 to {MAX_SELECTOR} characters")
    name_match = _NAME.match(text)
    name = name_match.group(0) if name_match else None
    rest = text[name_match.end() :].strip() if name_match else text
    labels: dict[str, str] = {}
    if rest:
        if not (rest.startswith("{") and rest.endswith("}")):
            raise ValueError(f'cannot read {text!r}; write metric{{label="value"}}')
        body, pos = rest[1:-1].strip(), 0
        while pos < len(body):
            m = _MATCHER.match(body, pos)
            if m is None:
                raise ValueError(f"cannot read the label matcher at {body[pos:]!r}")
            if m.group(2) == "=":
                labels[m.group(1)] = _ESCAPED.sub(lambda e: e.group(1), m.group(3))
            pos = m.end()
    if name is None and not rest.strip("{} "):
        raise ValueError("a selector needs a metric name or a label matcher")
    return name, labels
