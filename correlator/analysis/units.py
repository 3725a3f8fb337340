"""The smallest move that matters for a metric, read from the unit its name ends with."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

# Unit word (a ``_``-separated part of the name, as Prometheus' naming conventions put it)
# -> the smallest change worth a sigma for a series sitting at zero, where a floor relative
# to the level gives nothing: half a percentage point, a millisecond, 10 KiB, 0.01 cores.
UNIT_STEPS = {
    "percent": 0.5,
    "ratio": 0.005,
    "seconds": 1e-3,
    "ms": 1.0,
    "milliseconds": 1.0,
    "bytes": 10 * 1024.0,
    "kibibytes": 10.0,
    "mebibytes": 1.0,
    "megabytes": 1.0,
    "cores": 0.01,
    "millicores": 10.0,
    "celsius": 1.0,
    "watts": 1.0,
    "mhz": 10.0,
}


@lru_cache(maxsize=4096)
def unit_step(name: str) -> float:
    """Return the smallest meaningful change of a metric from its unit word, else 0."""
    for word in reversed(name.lower().split("_")):
        if word in UNIT_STEPS:
            return UNIT_STEPS[word]
    return 0.0


def zero_floors(names: list[str | None], spread: np.ndarray, share: float) -> np.ndarray:
    """Return each row's spread floor at level zero: its unit step, or its siblings' spread.

    Siblings (one metric on other labels) say what a meaningful move of that metric is: a
    series flat at zero beside siblings that vary by 0.1 CPU cores does not turn 1.5e-6
    cores into +1000 sigma. ``names`` holds None for rows without a unit or siblings.
    """
    floor = np.array([unit_step(n) if n else 0.0 for n in names])
    rows_of: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        if name is not None:
            rows_of.setdefault(name, []).append(i)
    spread = np.nan_to_num(spread)
    for rows in rows_of.values():
        if len(rows) > 1:
            floor[rows] = np.fmax(floor[rows], share * float(np.median(spread[rows])))
    return floor


_BUSY_WORDS = frozenset({"utilization", "utilisation", "usage", "util", "busy"})


@lru_cache(maxsize=4096)
def is_utilisation(name: str) -> bool:
    """Say whether a metric is a resource's busy share in percent (100 is saturation)."""
    words = name.lower().split("_")
    return bool(words) and words[-1] == "percent" and not _BUSY_WORDS.isdisjoint(words)


# Name words that say which way a metric hurts (a ``_``/``:``/``.``-separated part of its
# name). Up: slowness, failures, saturation, backlog, restarts, memory held. Down: what is
# served or left (availability, success, free memory). A name with neither moves both ways.
_HURTS_DOWN = frozenset(
    {"availability", "available", "success", "successful", "uptime", "free", "hit", "hits"}
)
_HURTS_UP = frozenset(
    {
        "latency", "duration", "delay", "wait", "error", "errors", "fail", "failed", "failure",
        "failures", "timeout", "timeouts", "exception", "exceptions", "saturation", "queue",
        "pending", "backlog", "restart", "restarts", "retries", "retry", "dropped", "drops",
        "rejected", "throttled", "memory", "mem", "oom", "fallback", "5xx",
    }
)  # fmt: skip
_WORDS = re.compile(r"[_:.\-]+")


@lru_cache(maxsize=4096)
def harm_direction(name: str) -> int:
    """Return which way a metric hurts from its name: +1 up, -1 down, 0 not known."""
    words = set(_WORDS.split(name.lower()))
    if not _HURTS_DOWN.isdisjoint(words):
        return -1
    return 1 if not _HURTS_UP.isdisjoint(words) else 0
