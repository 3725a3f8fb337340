"""PromQL's functions of a range vector: rates, changes, regressions and the ``*_over_time`` family.

Each takes a series' samples and every step's window at once. Sums, counts, minima and maxima
come from prefix sums (in extended precision) and sparse tables, so a 24 h panel costs a
few array passes per series; the rarer ones (quantile_over_time, holt_winters) walk the
windows. Results follow Prometheus 2.42's functions.go; the name is dropped from every
result but last_over_time's.
"""

from __future__ import annotations

import numpy as np

from correlator.promql.aggregate import quantile_of
from correlator.promql.functions import window_rates
from correlator.promql.values import EvalError, Raw, Tick, Vec, Windows, without_name

TICK_EVERY = 1024  # windows between ticks where windows are walked one by one
_RATES = ("rate", "increase", "irate", "delta")
_WALKED = ("quantile_over_time", "holt_winters")


def apply(
    func: str, win: Windows, scalars: list[np.ndarray], steps: np.ndarray, tick: Tick
) -> list[Vec]:
    """Return ``func`` of each series of a range vector at every step."""
    out = []
    for raw in win.series:
        tick()
        if func in _RATES:
            values, present = window_rates(raw.ts, raw.values, win.starts, win.ends, func)
        else:
            lo = np.searchsorted(raw.ts, win.starts, side="left")
            hi = np.searchsorted(raw.ts, win.ends, side="right")
            if func in _WALKED:
                values, present = _walk(func, raw, lo, hi, scalars, steps, tick)
            else:
                values, present = _windowed(func, raw, lo, hi, scalars, steps, tick)
        labels = raw.labels if func == "last_over_time" else without_name(raw.labels)
        out.append(Vec(labels, np.where(present, values, np.nan), present))
    return out


def absent_over_time(win: Windows, labels: dict[str, str]) -> list[Vec]:
    """Return 1 with ``labels`` at the steps where no series has a sample in the window."""
    any_sample = np.zeros(win.starts.size, dtype=bool)
    for raw in win.series:
        lo = np.searchsorted(raw.ts, win.starts, side="left")
        hi = np.searchsorted(raw.ts, win.ends, side="right")
        any_sample |= hi > lo
    return [Vec(labels, np.where(any_sample, np.nan, 1.0), ~any_sample)]


def _prefix(values: np.ndarray) -> np.ndarray:
    """Return sums of the first k values, k = 0..n, in extended precision."""
    return np.concatenate([[0], np.cumsum(values.astype(np.longdouble))])


def _window_sum(prefix: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return (prefix[hi] - prefix[lo]).astype(np.float64)


def _extreme(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, pick) -> np.ndarray:
    """Return ``pick`` (np.fmax or np.fmin) of each window, by a sparse table: NaN skipped."""
    levels = [values]
    width = 1
    while width * 2 <= values.size:
        prev = levels[-1]
        levels.append(pick(prev[:-width], prev[width:]))
        width *= 2
    n = np.maximum(hi - lo, 1)
    k = np.floor(np.log2(n)).astype(np.int64)
    out = np.full(lo.size, np.nan)
    for level in np.unique(k):
        sel = k == level
        table = levels[level]
        span = 1 << int(level)
        a = np.clip(lo[sel], 0, table.size - 1)
        b = np.clip(hi[sel] - span, 0, table.size - 1)
        out[sel] = pick(table[a], table[b])
    return out


def _windowed(
    func: str,
    raw: Raw,
    lo: np.ndarray,
    hi: np.ndarray,
    scalars: list[np.ndarray],
    steps: np.ndarray,
    tick: Tick,
) -> tuple[np.ndarray, np.ndarray]:
    """Return a vectorised function of every window: its values and where it has one."""
    values = raw.values
    n = hi - lo
    present = n > 0
    if not values.size:
        return np.full(lo.size, np.nan), present
    last = values[np.clip(hi - 1, 0, values.size - 1)]
    with np.errstate(all="ignore"):
        if func == "count_over_time":
            return n.astype(float), present
        if func == "present_over_time":
            return np.ones(lo.size), present
        if func == "last_over_time":
            return last, present
        if func in ("changes", "resets"):
            flags = np.zeros(values.size)
            if func == "changes":
                differ = values[1:] != values[:-1]
                flags[1:] = differ & ~(np.isnan(values[1:]) & np.isnan(values[:-1]))
            else:
                flags[1:] = values[1:] < values[:-1]
            counts = np.concatenate([[0], np.cumsum(flags)])
            return counts[hi] - counts[np.minimum(lo + 1, hi)], present
        if func == "idelta":
            before = values[np.clip(hi - 2, 0, values.size - 1)]
            return last - before, n >= 2
        if not np.isfinite(values).all():
            return _walk(func, raw, lo, hi, scalars, steps, tick)
        if func in ("sum_over_time", "avg_over_time"):
            prefix = _prefix(values)
            total = prefix[hi] - prefix[lo]
            if func == "avg_over_time":  # divided before rounding: no overflow near 1e308
                total = total / np.maximum(n, 1)
            return total.astype(np.float64), present
        if func in ("min_over_time", "max_over_time"):
            pick = np.fmax if func == "max_over_time" else np.fmin
            return _extreme(values, lo, hi, pick), present
        if func in ("stddev_over_time", "stdvar_over_time"):
            shifted = values - values.mean()
            s1 = _window_sum(_prefix(shifted), lo, hi)
            s2 = _window_sum(_prefix(shifted * shifted), lo, hi)
            size = np.maximum(n, 1)
            variance = np.maximum(s2 / size - (s1 / size) ** 2, 0.0)
            return (np.sqrt(variance) if func == "stddev_over_time" else variance), present
        if func in ("deriv", "predict_linear"):
            return _regression(func, raw, lo, hi, scalars, steps)
    raise EvalError(f"function {func}() is not supported over a range")


def _regression(
    func: str,
    raw: Raw,
    lo: np.ndarray,
    hi: np.ndarray,
    scalars: list[np.ndarray],
    steps: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Return deriv (the slope, per second) or predict_linear of every window's samples."""
    n = (hi - lo).astype(np.float64)
    present = n >= 2
    x = (raw.ts - raw.ts[0]).astype(np.longdouble) / 1000
    y = raw.values.astype(np.longdouble)
    sx, sy = _prefix(x), _prefix(y)
    sxy, sxx = _prefix(x * y), _prefix(x * x)
    size = np.maximum(n, 1)
    sum_x, sum_y = sx[hi] - sx[lo], sy[hi] - sy[lo]
    cov = (sxy[hi] - sxy[lo]) - sum_x * sum_y / size
    var = (sxx[hi] - sxx[lo]) - sum_x * sum_x / size
    with np.errstate(all="ignore"):
        slope = (cov / var).astype(np.float64)
    flags = np.zeros(raw.values.size)
    flags[1:] = raw.values[1:] != raw.values[:-1]
    changes = np.concatenate([[0], np.cumsum(flags)])
    constant = (changes[hi] - changes[np.minimum(lo + 1, hi)]) == 0
    slope = np.where(constant, 0.0, slope)  # as Prometheus: a flat window has slope 0
    if func == "deriv":
        return slope, present
    # predict_linear(v, t): the line's value t seconds after each step.
    at = (steps - raw.ts[0]).astype(np.longdouble) / 1000
    with np.errstate(all="ignore"):
        mean_x = (sum_x / size).astype(np.float64)
        mean_y = (sum_y / size).astype(np.float64)
        intercept = mean_y - slope * (mean_x - at.astype(np.float64))
    return slope * scalars[0] + intercept, present


def _holt_winters(values: np.ndarray, smoothing: float, trend: float) -> float:
    """Return the smoothed last value, as Prometheus' holt_winters (double exponential)."""
    if not 0 < smoothing < 1:
        raise EvalError(f"invalid smoothing factor. Expected: 0 < sf < 1, got: {smoothing:g}")
    if not 0 < trend < 1:
        raise EvalError(f"invalid trend factor. Expected: 0 < tf < 1, got: {trend:g}")
    s0, s1 = 0.0, float(values[0])
    b = float(values[1] - values[0])
    for i in range(1, values.size):
        x = smoothing * float(values[i])
        if i > 1:
            b = trend * (s1 - s0) + (1 - trend) * b
        y = (1 - smoothing) * (s1 + b)
        s0, s1 = s1, x + y
    return s1


def _walk(
    func: str,
    raw: Raw,
    lo: np.ndarray,
    hi: np.ndarray,
    scalars: list[np.ndarray],
    steps: np.ndarray,
    tick: Tick,
) -> tuple[np.ndarray, np.ndarray]:
    """Return a function computed window by window, its deadline checked as it goes.

    For what has no array form (quantile_over_time, holt_winters) and for any function of
    windows holding NaN or infinite values, which prefix sums would turn into NaN.
    """
    out = np.full(lo.size, np.nan)
    present = np.zeros(lo.size, dtype=bool)
    for n, i in enumerate(np.flatnonzero(hi > lo)):
        if n % TICK_EVERY == 0:
            tick()
        span = slice(lo[i], hi[i])
        value = _one_window(func, raw.ts[span], raw.values[span], [s[i] for s in scalars], steps[i])
        if value is not None:
            out[i], present[i] = value, True
    return out, present


def _one_window(
    func: str, ts: np.ndarray, window: np.ndarray, scalars: list, step: int
) -> float | None:
    """Return ``func`` of one window's samples, or None where it has no value."""
    if func == "quantile_over_time":
        return quantile_of(float(scalars[0]), window)
    if func == "holt_winters":
        return _holt_winters(window, scalars[0], scalars[1]) if window.size >= 2 else None
    if func == "sum_over_time":
        return float(np.add.reduce(window))
    if func == "avg_over_time":
        return _mean(window)
    if func in ("min_over_time", "max_over_time"):
        return _min_max(window, func == "max_over_time")
    if func in ("stddev_over_time", "stdvar_over_time"):
        count, mean, aux = 0.0, 0.0, 0.0
        for v in window.tolist():
            count += 1
            delta = v - mean
            mean += delta / count
            aux += delta * (v - mean)
        variance = aux / count
        return float(np.sqrt(variance)) if func == "stddev_over_time" else variance
    whole = np.array([0]), np.array([window.size])  # the window as one span
    at = [np.array([s]) for s in scalars]
    value, here = _regression(func, Raw({}, ts, window), *whole, at, np.array([step]))
    return float(value[0]) if here[0] else None


def _mean(window: np.ndarray) -> float:
    mean, count = 0.0, 0.0
    for v in window.tolist():
        count += 1
        if np.isinf(mean) and ((np.isinf(v) and (mean > 0) == (v > 0)) or np.isfinite(v)):
            continue
        mean += v / count - mean / count
    return mean


def _min_max(window: np.ndarray, highest: bool) -> float:
    best = float(window[0])
    for v in window.tolist()[1:]:
        if (v > best if highest else v < best) or np.isnan(best):
            best = v
    return best
