"""Read request bodies within a size limit, gzip included, and bound their JSON."""

from __future__ import annotations

import json
import math
import re
import zlib

import numpy as np
import orjson
from fastapi import HTTPException, Request

# Write bodies nest a few levels (a model card's free-form fields a few more).
MAX_JSON_DEPTH = 64
MAX_JSON_INTEGER = 2**63 - 1  # the widest integer column; larger ones are refused, not wrapped
_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = np.frombuffer(b"[{", np.uint8)


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


def dotted(path: list[str | int]) -> str:
    """Return a field path as text, e.g. ``series[3].labels``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


def _not_json(reason: str) -> HTTPException:
    return HTTPException(422, {"field": "body", "reason": reason})


async def read_json_body(request: Request, limit: int) -> object:
    """Return the decoded JSON body; 413 past ``limit`` bytes (before or after gunzip)."""
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
        return orjson.loads(raw)  # refuses nesting past 1024 levels by itself
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise _not_json(f"JSON nested too deeply: {exc}") from exc
        if json_depth(raw) > MAX_JSON_DEPTH:
            raise _not_json(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from exc
        try:  # bare NaN/Infinity tokens or huge integers: parse them so validation names them
            return json.loads(raw)
        except (ValueError, RecursionError):
            raise _not_json(f"not valid JSON: {exc}") from exc
