"""Fixed histogram bucket bounds shared by every model-side source.

The bounds and their ``le`` label texts are those of the incident bundles
(``shared/scenarios/FORMAT.md``), so agent data and bundles line up.
"""

from __future__ import annotations

import bisect
import math

INPUT_LENGTH_BOUNDS = (16, 32, 64, 128, 256, 512, 1024, 2048)
SCORE_BOUNDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# Mergeable latency histogram (ms): a 1-2-5 progression, summed across instances.
LATENCY_MS_BOUNDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


def le_text(bound: float) -> str:
    """Return the ``le`` label text of a bound as the bundles write it."""
    if math.isinf(bound):
        return "+Inf"
    if float(bound).is_integer() and not isinstance(bound, float):
        return str(int(bound))
    return repr(float(bound))


class CumulativeHistogram:
    """Cumulative per-bucket counters with fixed bounds (Prometheus semantics)."""

    __slots__ = ("bounds", "counts", "total", "sum", "_labels")

    def __init__(self, bounds: tuple[float, ...]):
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # last one is +Inf
        self.total = 0
        self.sum = 0.0
        self._labels = [le_text(b) for b in bounds] + ["+Inf"]

    def observe(self, value: float) -> None:
        """Count one observation."""
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += 1
        self.sum += value

    def cumulative(self) -> list[tuple[str, int]]:
        """Return ``(le, count of observations <= le)`` pairs, ``+Inf`` last."""
        out, running = [], 0
        for label, count in zip(self._labels, self.counts, strict=True):
            running += count
            out.append((label, running))
        return out
