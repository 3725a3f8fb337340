"""Encode a series' samples as two pcodec blobs: millisecond timestamps and float64 values.

pcodec is lossless: floats come back bit for bit (NaN payloads, -0.0, infinities), and
regular timestamps shrink to a few bytes per chunk. NaN stands for a NULL raw value.
"""

from __future__ import annotations

import numpy as np
from pcodec import ChunkConfig, standalone

# Level 4 of pcodec's 0-12: about half the encoding time of the default 8 on our chunks, for
# sizes within 1% (benchmarks/storage.py).
LEVEL = 4


def encode(ts: np.ndarray, values: np.ndarray) -> tuple[bytes, bytes]:
    """Return the blobs of int64 ms timestamps and float64 values (same length, at least 1)."""
    config = ChunkConfig(compression_level=LEVEL)
    return (
        standalone.simple_compress(np.ascontiguousarray(ts, dtype=np.int64), config),
        standalone.simple_compress(np.ascontiguousarray(values, dtype=np.float64), config),
    )


def decode(ts_blob: bytes, value_blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Return the int64 ms timestamps and float64 values of a chunk's blobs."""
    ts = standalone.simple_decompress(ts_blob)
    values = standalone.simple_decompress(value_blob)
    if ts.dtype != np.int64 or values.dtype != np.float64 or ts.shape != values.shape:
        raise ValueError("corrupt sample chunk: timestamps and values do not match")
    return ts, values
