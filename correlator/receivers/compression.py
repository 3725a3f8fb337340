"""Inflate snappy and gzip request bodies without ever growing past a size limit."""

from __future__ import annotations

import zlib

import cramjam


class TooLarge(ValueError):
    """A body (compressed or inflated) past the limit; answer 413."""


class BadEncoding(ValueError):
    """A body that is not what its Content-Encoding says; answer 400."""


class Unsupported(ValueError):
    """A Content-Type or Content-Encoding this endpoint does not take; answer 415."""


def declared_length(raw: bytes) -> int:
    """Return the uncompressed length a snappy block states in its varint header."""
    size = 0
    for i, byte in enumerate(raw[:10]):
        size |= (byte & 0x7F) << (7 * i)
        if byte < 0x80:
            return size
    raise BadEncoding("body is not snappy block format: no length header")


def unsnappy(raw: bytes, limit: int) -> bytes:
    """Return a snappy block-format body inflated, refusing one that would pass ``limit``.

    The block format starts with the uncompressed length (a varint), so a decompression
    bomb is refused from its header, before any byte is inflated.
    """
    size = declared_length(raw)
    if size > limit:
        raise TooLarge(f"snappy header declares {size} bytes; the limit is {limit} bytes")
    try:
        return bytes(cramjam.snappy.decompress_raw(raw))
    except cramjam.DecompressionError as exc:
        raise BadEncoding(f"body is not snappy block format: {exc}") from exc


def gunzip(raw: bytes, limit: int) -> bytes:
    """Return one whole gzip member inflated, stopping (TooLarge) as soon as it passes ``limit``."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(raw, limit + 1)
    except zlib.error as exc:
        raise BadEncoding(f"body is not valid gzip: {exc}") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise TooLarge(f"gzip body inflates past the limit of {limit} bytes")
    if not inflater.eof:
        raise BadEncoding("body is not valid gzip: truncated stream")
    if inflater.unused_data:
        raise BadEncoding(
            f"{len(inflater.unused_data)} bytes follow the first gzip member (a second member "
            "or trailing bytes); send the body as one gzip member"
        )
    return out
