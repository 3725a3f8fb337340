"""Read a binary request body within a size limit, then inflate it within the same limit."""

from __future__ import annotations

from fastapi import Request

from correlator.receivers.compression import TooLarge, Unsupported, gunzip, unsnappy


async def read_bytes(request: Request, limit: int) -> bytes:
    """Return the raw body; TooLarge as soon as it (or its Content-Length) passes ``limit``."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"body of {declared} bytes exceeds the limit of {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def inflate(raw: bytes, encoding: str, limit: int, *, allowed: frozenset[str]) -> bytes:
    """Return the body decoded from its Content-Encoding (one of ``allowed``) within ``limit``."""
    encoding = encoding.strip().lower() or "identity"
    if encoding not in allowed:
        raise Unsupported(
            f"Content-Encoding {encoding!r} is not accepted here; use one of {sorted(allowed)}"
        )
    if encoding == "snappy":
        return unsnappy(raw, limit)
    if encoding == "gzip":
        return gunzip(raw, limit)
    return raw
