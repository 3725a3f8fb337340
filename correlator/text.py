"""Text the service stores: refusing surrogates and control characters, escaping them for output.

One rule for every way text comes in (API bodies and paths, ingest, bundles, the CLI): a
string must be valid Unicode (no unpaired surrogate) and hold no control character (C0,
DEL, C1), except that free text (a summary, a description, a note...) may hold tab, newline
and carriage return. Names, ids, labels and keys hold none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from collector.schema import text_problem  # the rule itself, where the receivers check labels
from correlator.vocabulary import MODEL_CARD_PARTS

# Fields whose strings (and everything nested below them) are free text: multi-line prose,
# Markdown, a model card's parts, an environment fingerprint, Alertmanager's annotations.
FREE_TEXT = frozenset(
    {
        "summary",
        "description",
        "comment",
        "text",
        "scope",
        "reason",
        "annotations",
        "commonAnnotations",
        "fingerprint",
        *MODEL_CARD_PARTS,
    }
)
# What JSON text must hold for its decoded strings to break the rule: an escape of a control
# character or a surrogate (pairs match too: the walk decides), DEL, a C1 character, or
# UTF-8-encoded surrogates (raw C0 bytes inside strings are not JSON). One pattern per lead
# byte, each searched only when that byte is there: a memchr, then a prefix scan.
_SUSPECT_ESCAPE = re.compile(rb"\\(?:u(?:00[01]|007[fF]|00[89]|[dD][89a-fA-F])|[bfnrt])")
_SUSPECT_C1 = re.compile(rb"\xc2[\x80-\x9f]")
_SUSPECT_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")
_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_ESCAPE_KEEP_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def first_bad_text(
    doc: object, *, free: frozenset[str] = FREE_TEXT
) -> tuple[list[str | int], str] | None:
    """Return (path, reason) of the first key or string, in document order, that is refused.

    Strings at or below a field named in ``free`` are free text; the rest are names.
    """
    stack: list[tuple[list[str | int], object, bool]] = [([], doc, False)]
    while stack:
        path, value, lines = stack.pop()
        if isinstance(value, str):
            problem = text_problem(value, free=lines)
            if problem:
                return path, problem
        elif isinstance(value, dict):
            for k in value:
                if isinstance(k, str) and (problem := text_problem(k)):
                    return path + [k], "key " + problem
            items = reversed(value.items())
            stack.extend((path + [k], v, lines or k in free) for k, v in items)
        elif isinstance(value, list):
            for i in range(len(value) - 1, -1, -1):  # numbers (most of a batch) cost no path
                if isinstance(value[i], str | dict | list):
                    stack.append((path + [i], value[i], lines))
    return None


def may_hold_bad_text(raw: bytes) -> bool:
    """Say whether JSON text may decode to strings ``first_bad_text`` refuses (never a miss)."""
    return (
        b"\x7f" in raw
        or (b"\\" in raw and _SUSPECT_ESCAPE.search(raw) is not None)
        or (b"\xc2" in raw and _SUSPECT_C1.search(raw) is not None)
        or (b"\xed" in raw and _SUSPECT_SURROGATE.search(raw) is not None)
    )


def repair(value: object) -> object:
    """Return ``value`` with unpaired surrogates in its strings and keys replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {repair(k): repair(v) for k, v in value.items()}
    if isinstance(value, list):
        return [repair(v) for v in value]
    return value


def dotted(path: Sequence[object]) -> str:
    """Return a field path as text, e.g. ``series[3].labels``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


def not_utf8(value: str) -> str | None:
    """Return why a command-line argument is not UTF-8 (a byte Python kept as a surrogate)."""
    for found in _SURROGATE.finditer(value):
        if 0xDC80 <= ord(found.group()) <= 0xDCFF:  # how surrogateescape keeps an odd byte
            byte = ord(found.group()) - 0xDC00
            return f"not valid UTF-8 (byte 0x{byte:02X} at character {found.start()})"
    return None


def argument_problem(value: str, *, free: bool = False) -> str | None:
    """Return why a command-line argument cannot be stored: not UTF-8, or ``text_problem``."""
    return not_utf8(value) or text_problem(value, free=free)


def _escaped(found: re.Match) -> str:
    return f"\\u{ord(found.group()):04x}"


def printable(value: object, *, lines: bool = False) -> str:
    """Return ``value`` as text safe for a terminal: control characters and surrogates as \\uXXXX.

    JSON text stays valid JSON (``json.dumps`` has escaped C0 already; DEL, C1 and surrogates
    can stand only inside its strings), so printers of JSON pass it through with ``lines``.
    """
    return (_ESCAPE_KEEP_LINES if lines else _ESCAPE).sub(_escaped, str(value))
