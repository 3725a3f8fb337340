"""A linear scan of a query's text that refuses shapes the native parser cannot take.

promql-parser (Rust) recurses once per nested bracket and per operator of a chain, on the
calling thread's stack, and overflows it (a segfault: the process is gone) on a query well
inside the 10,000-character bound. Measured with promql-parser 0.12 on x86-64 Linux, each in
a child process: a chain ``1+1+...`` crashes at 4,186 operators on an 8 MiB stack and at
521 on 1 MiB; ``abs(abs(...))`` at 677 calls and ``((...))`` at 1,017 levels on 1 MiB.
The bounds below keep the worst query they let through (64 levels holding 200 operators)
under half of a 1 MiB stack, an eighth of the 8 MiB that Linux gives a thread by default.
"""

from __future__ import annotations

MAX_NESTING = 64  # brackets of any kind: ( [ { open at once
MAX_OPERATORS = 200  # binary and unary operators, set operators included
_OPEN, _CLOSE = "([{", ")]}"
_SYMBOLS = "+-*/%^<>"  # one operator each; == != <= >= are read as one
_KEYWORDS = frozenset({"and", "or", "unless", "atan2"})
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:")


class ShapeError(ValueError):
    """A query nested deeper or chained longer than the parser is let to take."""


def _skip_string(text: str, i: int) -> int:
    """Return the index after the string literal opening at ``i`` (its end if unclosed)."""
    quote = text[i]
    i += 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "`":
            i += 2
            continue
        if ch == quote:
            return i + 1
        i += 1
    return i


_DIGITS = frozenset("0123456789")  # ASCII only: str.isdigit() also takes "²" and "٣"


def _skip_number(text: str, i: int) -> int:
    """Return the index after the number or duration at ``i``; an exponent's sign included."""
    if text.startswith(("0x", "0X"), i):
        i += 2
        while i < len(text) and text[i] in _WORD:
            i += 1
        return i
    while i < len(text):
        ch = text[i]
        if ch in "eE" and i + 1 < len(text) and text[i + 1] in "+-":
            i += 2
        elif ch in _WORD or ch == ".":
            i += 1
        else:
            break
    return i


def check_shape(text: str) -> None:
    """Raise ShapeError when brackets nest past MAX_NESTING or operators pass MAX_OPERATORS."""
    depth = braces = operators = 0
    i, size = 0, len(text)
    while i < size:
        ch = text[i]
        if ch in "\"'`":
            i = _skip_string(text, i)
            continue
        if ch == "#":
            end = text.find("\n", i)
            i = size if end < 0 else end + 1
            continue
        if ch in _DIGITS or (ch == "." and i + 1 < size and text[i + 1] in _DIGITS):
            i = max(_skip_number(text, i), i + 1)  # always forward, whatever the character
            continue
        if ch in _WORD:
            start = i
            while i < size and text[i] in _WORD:
                i += 1
            if braces == 0 and text[start:i].lower() in _KEYWORDS:
                operators += 1
        elif ch in _OPEN:
            depth += 1
            braces += ch == "{"
            if depth > MAX_NESTING:
                raise ShapeError(
                    f"the query is nested deeper than {MAX_NESTING} brackets ( [ {{; flatten it"
                )
            i += 1
        elif ch in _CLOSE:
            depth = max(depth - 1, 0)
            braces = max(braces - (ch == "}"), 0)
            i += 1
        elif ch in _SYMBOLS or text.startswith("==", i) or (braces == 0 and ch == "!"):
            operators += 1  # inside braces only a matcher's = != =~ !~ is no operator
            i += 2 if text.startswith(("==", "!=", "<=", ">="), i) else 1
        else:
            i += 1
        if operators > MAX_OPERATORS:
            raise ShapeError(
                f"the query has more than {MAX_OPERATORS} operators; split it or aggregate first"
            )
