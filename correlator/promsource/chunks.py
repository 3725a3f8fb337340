"""Split a range query into chunks that stay within the server's points-per-series limit."""

from __future__ import annotations

import math


def plan_chunks(
    start: float, end: float, step: float, max_points: int = 11_000
) -> list[tuple[float, float]]:
    """Return [start, end] pieces, each returning at most ``max_points`` points per series."""
    if step <= 0 or not math.isfinite(step):
        raise ValueError(f"step must be a positive number of seconds, got {step!r}")
    if end < start:
        raise ValueError(f"end {end} is before start {start}")
    if max_points < 2:
        raise ValueError("max_points must be at least 2")
    # A query over [s, s + n*step] evaluates n + 1 points.
    span = (max_points - 1) * step
    chunks, s = [], float(start)
    while True:
        e = min(s + span, float(end))
        chunks.append((s, e))
        if e >= end:
            return chunks
        s = e + step


def points(start: float, end: float, step: float) -> int:
    """Return how many points a range query over [start, end] at ``step`` evaluates."""
    return int(math.floor((end - start) / step + 1e-9)) + 1
