"""Units read from metric names, byte scaling and per-second rates of counters."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

BYTE_UNITS = ("B", "B/s")
BINARY_PREFIXES = ("", "Ki", "Mi", "Gi", "Ti")


@dataclass(frozen=True, slots=True)
class Unit:
    """How a metric is drawn: axis label, counter drawn as a rate, factor to the base unit."""

    label: str
    rate: bool = False
    factor: float = 1.0


# Longest suffix first: "_bytes_per_second" before "_per_second" and "_bytes".
SUFFIXES: tuple[tuple[str, Unit], ...] = (
    ("_bytes_per_second", Unit("B/s")),
    ("_per_second", Unit("/s")),
    ("_mebibytes", Unit("B", factor=2.0**20)),
    ("_kibibytes", Unit("B", factor=2.0**10)),
    ("_bytes", Unit("B")),
    ("_milliseconds", Unit("ms")),
    ("_seconds", Unit("s")),
    ("_ms", Unit("ms")),
    ("_percent", Unit("%")),
    ("_ratio", Unit("ratio")),
    ("_celsius", Unit("°C")),
    ("_watts", Unit("W")),
    ("_mhz", Unit("MHz")),
    ("_millicores", Unit("millicores")),
)


def unit_of(metric: str | None) -> Unit:
    """Return the unit a metric's name states (Prometheus naming); ``_total`` is a rate."""
    name = (metric or "").lower()
    if name.endswith("_total"):
        base = unit_of(name.removesuffix("_total"))
        return Unit(f"{base.label}/s" if base.label else "/s", rate=True, factor=base.factor)
    for suffix, unit in SUFFIXES:
        if name.endswith(suffix):
            return unit
    return Unit("")


def byte_scale(peak: float, label: str) -> tuple[float, str]:
    """Return the divisor and label (B, KiB, MiB, GiB, TiB) that suit a byte peak."""
    if label not in BYTE_UNITS:
        return 1.0, label
    power = 0
    while power < len(BINARY_PREFIXES) - 1 and abs(peak) >= 1024.0 ** (power + 1):
        power += 1
    return 1024.0**power, BINARY_PREFIXES[power] + label


def byte_scaled(series: list, label: str) -> tuple[list, str]:
    """Return series in the byte unit their peak suits (KiB, MiB...), and that unit's label."""
    peaks = [float(np.nanmax(np.abs(s.values))) for s in series if np.isfinite(s.values).any()]
    divisor, label = byte_scale(max(peaks, default=0.0), label)
    if divisor == 1.0:
        return series, label
    return [replace(s, values=s.values / divisor) for s in series], label


def counter_rate(ts: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the per-second increase of a counter between samples; a drop is a reset."""
    if ts.size < 2:
        return ts[:0], values[:0]
    gap = np.diff(ts)
    rise = np.diff(values)
    rise = np.where(rise < 0, values[1:], rise)  # restarted from zero
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(gap > 0, rise / np.where(gap > 0, gap, 1.0), np.nan)
    return ts[1:], rate


def as_drawn(ts: np.ndarray, values: np.ndarray, unit: Unit) -> tuple[np.ndarray, np.ndarray]:
    """Return a series' values in its unit: factor applied, a counter as its rate."""
    if unit.factor != 1.0:
        values = values * unit.factor
    return counter_rate(ts, values) if unit.rate else (ts, values)
