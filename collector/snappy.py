"""Snappy block compression of remote write's bodies (the raw format, not the framed one)."""

from __future__ import annotations

import cramjam


def compress(data: bytes) -> bytes:
    """Return ``data`` snappy block-compressed."""
    return bytes(cramjam.snappy.compress_raw(data))
