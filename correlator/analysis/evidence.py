"""One-sentence evidence a person can check in seconds."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from correlator.analysis.units import range_rule

UNITS = (
    ("_ms", "ms"),
    ("_seconds", "s"),
    ("_percent", "%"),
    ("_celsius", "°C"),
    ("_watts", "W"),
    ("_mhz", "MHz"),
    ("_bytes_per_second", "B/s"),
    ("_bytes", "B"),
    ("_per_second", "/s"),
    ("_rate", ""),
)
ALGO_PREFIXES = ("model_input_", "model_score", "model_ctr")
INFRA_PREFIXES = ("model_", "gpu_", "node_", "container_", "feature_service_")


def owner_of(metric: str, node_owner: str | None) -> str:
    """Return the owning team: data metrics are algo's, serving and system metrics infra's."""
    if metric.startswith(ALGO_PREFIXES):
        return "algo"
    if metric.startswith(INFRA_PREFIXES):
        return "infra"
    return node_owner or "infra"


def clock(ts: float) -> str:
    """Format unix seconds as HH:MM UTC."""
    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M")


def elapsed(seconds: float) -> str:
    """Say how long something lasted, to the second: 45s, 29m 45s, 2h 5m."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes}m" if hours else (f"{minutes}m {secs}s" if minutes else f"{secs}s")


def duration(seconds: float) -> str:
    """Say a duration briefly: 45 s, 4 min, 2.5 h."""
    s = abs(seconds)
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def relative(lead: float) -> str:
    """Say where an onset lies relative to the breach."""
    if abs(lead) < 1:
        return "at the breach"
    return f"{duration(lead)} {'before' if lead > 0 else 'after'} the breach"


# A unit's multiples, largest first: a value is said in the largest it reaches.
_MULTIPLES = {
    "B": ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB")),
    "B/s": ((1024**3, "GiB/s"), (1024**2, "MiB/s"), (1024, "KiB/s")),
    "s": ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")),  # 8.9 ms, not 8.90e-03 s
}


def number(value: float, unit: str = "") -> str:
    """Format a value compactly with its unit (bytes in KiB to GiB, under a second in ms, us)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    for size, name in _MULTIPLES.get(unit, ()):
        if abs(value) >= size:
            if unit.startswith("B"):
                return f"{value / size:.1f} {name}"
            value, unit = value / size, name
            break
    a = abs(value)
    text = f"{value:.0f}" if a >= 100 else f"{value:.3g}" if a >= 1e-3 or a == 0 else f"{value:.2e}"
    return f"{text}{unit}" if unit.startswith(("%", "/")) else f"{text} {unit}".strip()


def _per_window(metric: str) -> tuple[str, str] | None:
    """Return the range of a recording rule that counts per window, else None.

    Loki's ``count_over_time`` and ``increase``: ``log_lines:count1m`` is lines per minute.
    """
    rule = range_rule(metric)
    if rule is None or rule[0] not in ("count", "increase") or rule[2] not in "smh":
        return None
    return rule[1], rule[2]


def unit_of(metric: str) -> str:
    """Return the unit named by a metric's suffix."""
    per = _per_window(metric)
    if per:
        n, u = per
        return "/min" if (n, u) == ("1", "m") else f"/{n}{u}"
    for suffix, unit in UNITS:
        if metric.endswith(suffix):
            return unit
    return ""


def describe(metric: str, labels: dict[str, str]) -> str:
    """Name a signal for a sentence: metric words plus its most specific label."""
    name, _, rule = metric.removesuffix("_bucket").partition(":")
    counted = _per_window(metric)  # said by the unit ("7/min")
    words = name.replace("_", " ") + (f" ({rule})" if rule and not counted else "")
    if labels.get("level"):
        words = f"{labels['level']} {words}"
    where = next((labels[k] for k in ("instance", "service", "host", "model") if k in labels), "")
    if "gpu" in labels:
        where = f"{labels.get('host', where)}/gpu{labels['gpu']}"
    if not where and "server" in labels:
        # A call's series measures its callee's serving: blamed on the server side.
        caller = f"{labels['client']} -> " if "client" in labels else ""
        return f"{labels['server']} (server side of {caller}{labels['server']}): {words}"
    return f"{words} on {where}" if where else words


def series_sentence(
    *, metric, labels, before, after, z, onset, lead, explained_by=None, rate=False
) -> str:
    """Say what a series did: ``before -> after unit (z) from HH:MM, lead``."""
    unit = unit_of(metric) + ("/s" if rate and not unit_of(metric) else "")
    text = (
        f"{describe(metric, labels)} {number(before, unit)} -> {number(after, unit)} "
        f"({z:+.0f} sigma) from {clock(onset)}, {relative(lead)}"
    )
    return text + (f"; follows {explained_by}" if explained_by else "")


def drift_sentence(*, metric, labels, p_before, p_after, psi, level, onset, lead) -> str:
    """Say how a distribution moved: ``p95 before -> after (PSI x, level) from HH:MM, lead``."""
    return (
        f"{describe(metric, labels)} p95 {number(p_before)} -> {number(p_after)} "
        f"(PSI {psi:.2f}, {level}) from {clock(onset)}, {relative(lead)}"
    )


def change_sentence(change: dict, *, lead: float, confirmed: str | None) -> str:
    """Say what a change was, when, and which anomaly followed it."""
    what = change.get("summary") or f"{change['kind']} on {change.get('target', '?')}"
    text = f"{change['kind']} '{what}' {relative(lead)}"
    return text + (f"; followed by {confirmed}" if confirmed else "")
