"""A parser of the Prometheus text exposition format that keeps metric names as written.

(prometheus_client's parser renames counters to ``*_total``; the mappings
need the servers' own names.)
"""

from __future__ import annotations

import math
import re

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,)?')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
_SPECIAL = {"+Inf": math.inf, "-Inf": -math.inf, "Inf": math.inf, "NaN": math.nan}


def _unescape(text: str) -> str:
    return re.sub(r'\\[\\"n]', lambda m: _ESCAPES[m.group(0)], text)


def parse_line(line: str, lineno: int = 0) -> tuple[str, dict[str, str], float] | None:
    """Return ``(name, labels, value)`` of one sample line, None for comments and blanks."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    match = _NAME.match(line)
    if not match:
        raise ValueError(f"line {lineno}: no metric name in {line[:80]!r}")
    name, pos, labels = match.group(0), match.end(), {}
    if pos < len(line) and line[pos] == "{":
        pos += 1
        while True:
            while pos < len(line) and line[pos] == " ":
                pos += 1
            if pos < len(line) and line[pos] == "}":
                pos += 1
                break
            lab = _LABEL.match(line, pos)
            if not lab:
                raise ValueError(f"line {lineno}: bad label set in {line[:80]!r}")
            labels[lab.group(1)] = _unescape(lab.group(2))
            pos = lab.end()
    parts = line[pos:].split()
    if not parts:
        raise ValueError(f"line {lineno}: no value in {line[:80]!r}")
    text = parts[0]
    value = _SPECIAL[text] if text in _SPECIAL else float(text)
    return name, labels, value


def parse_exposition(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Return every sample of a text exposition as ``(name, labels, value)``."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        sample = parse_line(line, i)
        if sample is not None:
            out.append(sample)
    return out
