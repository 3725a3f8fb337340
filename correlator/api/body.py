"""Read request bodies within a size limit, gzip included."""

from __future__ import annotations

import json
import zlib

import orjson
from fastapi import HTTPException, Request


def _too_large(limit: int, what: str) -> HTTPException:
    return HTTPException(413, f"{what} exceeds the limit of {limit} bytes; send smaller batches")


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
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:  # bare NaN/Infinity tokens: parse them so validation can name the sample
            return json.loads(raw)
        except ValueError:
            raise HTTPException(422, {"field": "body", "reason": f"not valid JSON: {exc}"}) from exc
