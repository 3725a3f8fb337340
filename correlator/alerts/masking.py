"""Masks for secrets (webhook URLs, signing keys) in logs, errors and API answers.

A receiver may echo a secret back in any form: JSON-escaped (``\\/``), percent-encoded
once or twice, as HTML entities, re-cased, or only in part. ``scrub`` decodes the text
the way such echoes are encoded, keeping where each decoded byte came from, and masks
every run of 8 or more bytes that is a piece of a secret (case ignored), so each of those
forms is masked where it stands in the original text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

MASK = "****"
MIN_SECRET = 8  # shorter header values (``json``, ``1``) would mask ordinary words
MIN_PREFIX = 3  # a cut secret's shorter remnant tells nothing the mask does not
WINDOW = 8  # any run of this many bytes of a secret, however encoded, is masked
DECODE_PASSES = 3  # percent-encoded twice, inside a JSON string: three layers
# A run that looks like a key or token: masked in a receiver's answer even when it is no
# configured secret (16+ characters with letters and digits, or 32+ in both cases).
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~%\\]{16,}")
_ENTITY = re.compile(rb"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,6});")
_NAMED = {b"amp": "&", b"quot": '"', b"apos": "'", b"lt": "<", b"gt": ">", b"sol": "/"}
_NAMED |= {b"colon": ":", b"equals": "=", b"quest": "?", b"num": "#", b"percnt": "%"}
_ESCAPES = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("f"): 12}
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPE_START = re.compile(rb"[%+\\&]")
_PARTIAL = re.compile(r"(%[0-9A-Fa-f]?|\\(u[0-9A-Fa-f]{0,3}|x[0-9A-Fa-f]?)?|&#?[0-9A-Za-z]{0,7})$")

Unit = tuple[int, int, int]  # a byte, and the span of the original text it comes from


def mask_secret(secret: str | None) -> str | None:
    """Return '****' plus at most the last 2 characters of a secret (None stays None)."""
    if not secret:
        return None
    return MASK + (secret[-2:] if len(secret) >= 12 else "")


def mask_url(url: str) -> str:
    """Return scheme and host of a URL; the path and query (the webhook's key) are masked."""
    parts = urlsplit(url)
    if not parts.netloc:
        return MASK
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    tail = rest[-4:] if len(rest) >= 16 else ""
    return (
        f"{parts.scheme}://{host}/{MASK}{tail}" if rest.strip("/") else f"{parts.scheme}://{host}"
    )


def _units(text: str) -> list[Unit]:
    """Return the UTF-8 bytes of text, each with the span of the character it encodes."""
    return [(b, i, i + 1) for i, ch in enumerate(text) for b in ch.encode("utf-8", "replace")]


def _char_units(cp: int, start: int, end: int) -> list[Unit]:
    return [(b, start, end) for b in chr(cp).encode("utf-8", "replace")]


def _decode_at(raw: bytes, units: list[Unit], i: int) -> tuple[list[Unit], int] | None:
    """Decode the escape starting at ``i``: return its bytes and the index after it."""
    b, n = raw[i], len(raw)
    start = units[i][1]
    if b == ord("%") and i + 2 < n and set(raw[i + 1 : i + 3]) <= _HEX:
        return [(int(raw[i + 1 : i + 3], 16), start, units[i + 2][2])], i + 3
    if b == ord("+"):
        return [(ord(" "), start, units[i][2])], i + 1
    if b == ord("\\") and i + 1 < n:
        nxt = raw[i + 1]
        if nxt == ord("u") and i + 5 < n and set(raw[i + 2 : i + 6]) <= _HEX:
            return _char_units(int(raw[i + 2 : i + 6], 16), start, units[i + 5][2]), i + 6
        if nxt == ord("x") and i + 3 < n and set(raw[i + 2 : i + 4]) <= _HEX:
            return [(int(raw[i + 2 : i + 4], 16), start, units[i + 3][2])], i + 4
        return [(_ESCAPES.get(nxt, nxt), start, units[i + 1][2])], i + 2
    if b == ord("&"):
        m = _ENTITY.match(raw, i)
        if m:
            name, end = m.group(1), units[m.end() - 1][2]
            if name[:1] == b"#":
                digits = name[1:]
                cp = int(digits[1:], 16) if digits[:1] in (b"x", b"X") else int(digits)
                return _char_units(min(cp, 0x10FFFF), start, end), m.end()
            if name.lower() in _NAMED:
                return _char_units(ord(_NAMED[name.lower()]), start, end), m.end()
    return None


def _decode_once(units: list[Unit]) -> tuple[list[Unit], bool]:
    """Undo one layer of percent, JSON/C and HTML escapes; say whether anything changed."""
    raw = bytes(u[0] for u in units)
    out: list[Unit] = []
    done, changed = 0, False  # units[:done] are in out
    for m in _ESCAPE_START.finditer(raw):
        if m.start() < done:
            continue  # inside an escape decoded already
        decoded = _decode_at(raw, units, m.start())
        if decoded is not None:
            out.extend(units[done : m.start()])
            part, done = decoded
            out.extend(part)
            changed = True
    out.extend(units[done:])
    return out, changed


def _canonical(text: str) -> list[Unit]:
    """Return text decoded (up to DECODE_PASSES layers) and lower-cased, byte by byte."""
    units = _units(text)
    for _ in range(DECODE_PASSES):
        units, changed = _decode_once(units)
        if not changed:
            break
    return [(b + 32 if 65 <= b <= 90 else b, s, e) for b, s, e in units]


def secret_parts(secret: str) -> list[str]:
    """Return what is secret in a value: a URL's path, query, fragment and user info."""
    if "://" not in secret:
        return [secret]
    parts = urlsplit(secret)
    values = [parts.path if parts.path.strip("/") else "", parts.query, parts.fragment]
    values += [parts.username or "", parts.password or ""]
    return [v for v in values if v]


def _marked(units: list[Unit], secrets: list[bytes], *, cut: bool) -> list[tuple[int, int]]:
    """Return the original spans of every piece of a secret found in the decoded units."""
    data = bytes(u[0] for u in units)
    spans: list[tuple[int, int]] = []

    def mark(lo: int, hi: int) -> None:
        spans.append((units[lo][1], units[hi - 1][2]))

    grams: set[bytes] = set()
    for secret in secrets:
        if len(secret) >= WINDOW:
            grams.update(secret[j : j + WINDOW] for j in range(len(secret) - WINDOW + 1))
            continue
        at = data.find(secret)
        while at >= 0:
            mark(at, at + len(secret))
            at = data.find(secret, at + 1)
    for j in range(len(data) - WINDOW + 1):
        if data[j : j + WINDOW] in grams:
            mark(j, j + WINDOW)
    if cut and data:  # a cut may leave a shorter piece of a secret at the very end
        for size in range(min(WINDOW - 1, len(data)), MIN_PREFIX - 1, -1):
            if any(data[-size:] in s for s in secrets if len(s) > size):
                mark(len(data) - size, len(data))
                break
    return spans


def _apply(text: str, spans: list[tuple[int, int]]) -> str:
    """Return text with each span (merged where they touch) replaced by one mask."""
    if not spans:
        return text
    hidden = [False] * len(text)
    for lo, hi in spans:
        hidden[lo:hi] = [True] * (hi - lo)
    out = []
    for i, ch in enumerate(text):
        if not hidden[i]:
            out.append(ch)
        elif i == 0 or not hidden[i - 1]:
            out.append(MASK)
    return "".join(out)


@lru_cache(maxsize=256)
def _form(part: str) -> bytes:
    """Return the decoded, lower-cased bytes of one secret part."""
    return bytes(u[0] for u in _canonical(part))


def _forms(secrets: tuple[str | None, ...]) -> list[bytes]:
    """Return the decoded, lower-cased bytes of every secret part (duplicates once)."""
    seen: dict[bytes, None] = {}
    for secret in secrets:
        for part in secret_parts(secret or ""):
            form = _form(part)
            if form.strip(b"/ "):
                seen[form] = None
    return list(seen)


def _scrub(text: str, secrets: tuple[str | None, ...], *, cut: bool) -> str:
    forms = _forms(secrets)
    if not forms or not text:
        return text
    units = _canonical(text)
    if cut:  # an escape cut in half cannot be decoded: judge what precedes it
        partial = _PARTIAL.search(text)
        if partial:
            keep = [u for u in units if u[2] <= partial.start()]
            spans = _marked(keep, forms, cut=True)
            if spans and spans[-1][1] == partial.start():
                spans.append((partial.start(), len(text)))
            return _apply(text, spans + _marked(units, forms, cut=False))
    return _apply(text, _marked(units, forms, cut=cut))


def scrub(text: str, *secrets: str | None) -> str:
    """Return text with every piece of 8+ characters of a secret masked, however encoded.

    A URL's path, query, fragment and user info are its secret parts (its host is not).
    Pieces are matched after undoing percent (once or twice), JSON and HTML escapes and
    case, so ``\\/``, ``%2F``, ``%252F`` and re-cased echoes are masked where they stand.
    """
    return _scrub(text, secrets, cut=False)


def mask_tokens(text: str) -> str:
    """Return text with every run that looks like a key or token masked."""

    def one(m: re.Match) -> str:
        run = m.group(0)
        digits = any(c.isdigit() for c in run)
        mixed = any(c.isupper() for c in run) and any(c.islower() for c in run)
        letters = mixed or any(c.isalpha() for c in run)
        return MASK if (letters and digits) or (mixed and len(run) >= 32) else run

    return _TOKEN.sub(one, text)


def channel_secrets(url: str, secret: str | None, headers: dict[str, str]) -> list[str]:
    """Return what must never be stored of a channel: URL, signing secret, header values."""
    values = [url, secret or ""]
    for value in headers.values():
        values.append(value)
        values.extend(part for part in value.split() if len(part) >= MIN_SECRET)
    return [v for v in values if len(v) >= MIN_SECRET or v in (url, secret)]


def scrub_cut(text: str, limit: int, *secrets: str | None) -> str:
    """Return a receiver's text scrubbed of secrets and tokens, then cut to ``limit``.

    No secret's start survives a cut: the text may arrive already cut (the transport
    keeps 2,000 characters), and the cut here may split a secret again.
    """
    given = tuple(s for s in secrets if s)
    text = mask_tokens(_scrub(text, given, cut=True))
    return _scrub(text[:limit], given, cut=True) if len(text) > limit else text
