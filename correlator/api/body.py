"""Read request bodies within a size limit, gzip included, and bound their JSON."""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import orjson
from fastapi import HTTPException, Request

from correlator.text import dotted, first_bad_text, may_hold_bad_text, repair

# Write bodies nest a few levels (a model card's free-form fields a few more).
MAX_JSON_DEPTH = 64
MAX_JSON_INTEGER = 2**63 - 1  # the widest integer column; larger ones are refused, not wrapped
_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = np.frombuffer(b"[{", np.uint8)
T = TypeVar("T")


def _too_large(limit: int, what: str) -> HTTPException:
    return HTTPException(413, f"{what} exceeds the limit of {limit} bytes; send smaller batches")


def json_depth(raw: bytes) -> int:
    """Return how deeply arrays and objects nest in JSON text (brackets in strings ignored)."""
    marks = np.frombuffer(_STRINGS.sub(b"", raw).translate(None, _NOT_BRACKETS), np.uint8)
    if not marks.size:
        return 0
    return int(np.cumsum(np.where(np.isin(marks, _OPENING), 1, -1)).max())


def out_of_range(doc: object) -> tuple[list[str | int], str] | None:
    """Return (path, reason) of the first number a float64 or int64 column cannot hold."""
    stack: list[tuple[list[str | int], object]] = [([], doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((path + [k], v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((path + [i], v) for i, v in enumerate(value))
        elif type(value) is int and abs(value) > MAX_JSON_INTEGER:
            return path, "integer out of range (beyond 64 bits)"
        elif type(value) is float and not math.isfinite(value):
            return path, f"number must be finite, got {value!r}"
    return None


def _not_json(reason: str) -> HTTPException:
    return HTTPException(422, {"field": "body", "reason": reason})


async def read_json_body(request: Request, limit: int, then: Callable[[object], T]) -> T:
    """Return ``then(document)`` of the JSON body, then refuse its bad text (``correlator.text``).

    413 past ``limit`` bytes (before or after gunzip). ``then`` (a parser with its own field
    errors) answers first; the text check walks the document only when its bytes may hold a
    surrogate or control character, or when it took the slower parser (surrogates pass it).
    """
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit, f"body of {declared} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit, "body")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if request.headers.get("content-encoding", "").lower() == "gzip":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            raw = inflater.decompress(raw, limit + 1)
        except zlib.error as exc:
            raise HTTPException(400, f"body is not valid gzip: {exc}") from exc
        if len(raw) > limit or inflater.unconsumed_tail:
            raise _too_large(limit, "decompressed body")
    try:
        doc = orjson.loads(raw)  # refuses nesting past 1024 levels, and lone surrogates
        suspect = may_hold_bad_text(raw)  # a scan of the bytes, no walk unless it hits
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise _not_json(f"JSON nested too deeply: {exc}") from exc
        if json_depth(raw) > MAX_JSON_DEPTH:
            raise _not_json(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from exc
        try:  # bare NaN/Infinity tokens, huge integers, surrogates: parse them to name them
            doc, suspect = json.loads(raw), True
        except (ValueError, RecursionError):
            raise _not_json(f"not valid JSON: {exc}") from exc
    out = then(doc)
    if suspect:
        refuse_bad_text(doc)
    return out


def refuse_bad_text(doc: object) -> None:
    """Raise the 422 naming the first string or key of ``doc`` that ``correlator.text`` refuses."""
    found = first_bad_text(doc)
    if found is not None:
        field = dotted([repair(p) for p in found[0]])  # the key refused may be a surrogate
        raise HTTPException(422, {"field": field, "reason": found[1]})
