"""The smallest move that matters for a metric, read from the unit its name ends with."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from correlator.analysis.nodes import metric_kind

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


def zero_floors(names: list[str | None]) -> np.ndarray:
    """Return each row's spread floor at level zero: its unit's smallest meaningful step.

    A series flat at zero does not turn 1.5e-6 cores into +1000 sigma. ``names`` holds None
    for rows without a unit floor (a kind with an alarm level has its own).
    """
    return np.array([unit_step(n) if n else 0.0 for n in names])


# A recording rule's operation over a range, as Prometheus names them (``level:metric:op``):
# ``log_lines:count1m``, ``http_requests:rate5m``.
_OVER_RANGE = re.compile(r":([a-z_]*?)(\d+)([smhdwy])$")


@lru_cache(maxsize=4096)
def range_rule(name: str) -> tuple[str, str, str] | None:
    """Return a recording rule's operation, range and unit (``count``, ``1``, ``m``), else None."""
    found = _OVER_RANGE.search(name)
    return None if found is None else (found[1], found[2], found[3])


def over_interval(name: str) -> bool:
    """Say whether a metric's name marks a figure over the interval before each sample."""
    return range_rule(name) is not None


# Unit word of a duration -> seconds.
_SECONDS = {"seconds": 1.0, "ms": 1e-3, "milliseconds": 1e-3, "us": 1e-6, "microseconds": 1e-6}


@lru_cache(maxsize=4096)
def seconds_per_unit(name: str) -> float | None:
    """Return one unit of a duration metric in seconds, from its unit word (None: no unit)."""
    for word in reversed(name.lower().split("_")):
        if word in _SECONDS:
            return _SECONDS[word]
    return None


def latency_share(names: list[str], rises: np.ndarray, sla: str, sla_rise: float) -> np.ndarray:
    """Return the share of the SLA latency's rise that each latency row's rise (``rises``) is.

    A call 2 ms slower does not make a front end 3 s slower: compared in seconds (or as they
    are when neither names a unit), a small share carries little of the breach. Rows that
    are no latency, rose in no comparable unit, or an SLA that is no latency get share 1.
    """
    out = np.ones(len(names))
    if metric_kind(sla) != "latency" or not sla_rise > 0:
        return out
    sla_unit = seconds_per_unit(sla)
    for i, name in enumerate(names):
        unit = seconds_per_unit(name)
        if metric_kind(name) != "latency" or (unit is None) != (sla_unit is None):
            continue
        if np.isfinite(rises[i]):
            out[i] = max(float(rises[i]), 0.0) * (unit or 1.0) / (sla_rise * (sla_unit or 1.0))
    return out


# Name words that say which way a metric hurts (a ``_``/``:``/``.``-separated part of its
# name). Up: slowness, failures, saturation, backlog, restarts, memory held. Down: what is
# served or left (availability, success, free memory). Otherwise a latency or an error
# (``metric_kind``: response_time, 4xx) hurts up, and any other name either way.
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
    if not _HURTS_UP.isdisjoint(words) or metric_kind(name) in ("latency", "error"):
        return 1
    return 0


# Label values that say a series counts failures: a log level (Loki), a span status
# (OpenTelemetry spanmetrics).
_FAILING = frozenset({"error", "exception", "fatal", "critical", "status_code_error"})


def harm_of_labels(labels: dict[str, str]) -> int:
    """Return +1 for a series of error log lines or error spans, else 0 (not known)."""
    level = labels.get("level", labels.get("status_code", "")).lower()
    return 1 if level in _FAILING else 0
