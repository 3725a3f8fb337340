"""PromQL's functions of instant vectors and scalars: math, clamping, labels, time, conversion.

Each works on every step at once and follows Prometheus 2.42's functions.go: the metric name
is dropped from results except those of label_replace, label_join, sort and sort_desc.
"""

from __future__ import annotations

import math
import re

import numpy as np
import re2

from correlator.promql.functions import bucket_quantile
from correlator.promql.values import EvalError, Tick, Value, Vec, vector_of, without_name
from correlator.selector import REGEX_MAX_MEM

TICK_EVERY = 1024
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_TEMPLATE = re.compile(r"\$(?:\$|\{([a-zA-Z0-9_]*)\}|([a-zA-Z0-9_]+))")
MATH = {
    "abs": np.abs,
    "ceil": np.ceil,
    "floor": np.floor,
    "exp": np.exp,
    "sqrt": np.sqrt,
    "ln": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "sgn": np.sign,
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "cos": np.cos,
    "cosh": np.cosh,
    "sin": np.sin,
    "sinh": np.sinh,
    "tan": np.tan,
    "tanh": np.tanh,
    "deg": np.degrees,
    "rad": np.radians,
}
DATES = (
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "hour",
    "minute",
    "month",
    "year",
)


def apply(func: str, args: list, steps: np.ndarray, tick: Tick) -> Value:
    """Return ``func(*args)``; args are values (vectors, scalars) or strings."""
    with np.errstate(all="ignore"):
        if func in MATH:
            return _each(vector_of(args[0], func), MATH[func])
        if func == "time":
            return steps / 1000.0
        if func == "pi":
            return np.full(steps.size, math.pi)
        if func == "vector":
            return [Vec({}, args[0], np.ones(steps.size, dtype=bool))]
        if func == "scalar":
            return _scalar(vector_of(args[0], func), steps.size)
        if func == "timestamp":
            return _each(vector_of(args[0], func), lambda v: steps / 1000.0)
        if func == "round":
            to = args[1] if len(args) > 1 else np.ones(steps.size)
            inverse = 1.0 / to
            return _each(vector_of(args[0], func), lambda v: np.floor(v * inverse + 0.5) / inverse)
        if func in ("clamp", "clamp_min", "clamp_max"):
            return _clamp(func, vector_of(args[0], func), args[1:])
        if func in ("sort", "sort_desc"):
            return vector_of(args[0], func)
        if func == "label_replace":
            return label_replace(vector_of(args[0], func), *args[1:])
        if func == "label_join":
            return label_join(vector_of(args[0], func), args[1], args[2], list(args[3:]))
        if func == "histogram_quantile":
            return histogram_quantile(args[0], vector_of(args[1], func), steps.size, tick)
        if func in DATES:
            vecs = vector_of(args[0], func) if args else [Vec({}, steps / 1000.0, steps >= 0)]
            return _each(vecs, lambda v: _date_part(func, v))
    raise EvalError(f"function {func}() is not supported")


def _each(vecs: list[Vec], op) -> list[Vec]:
    return [Vec(without_name(v.labels), op(v.values), v.present) for v in vecs]


def _scalar(vecs: list[Vec], size: int) -> np.ndarray:
    """Return the one present series' value at each step; NaN where there are none or several."""
    if not vecs:
        return np.full(size, np.nan)
    present = np.stack([v.present for v in vecs])
    values = np.stack([np.where(v.present, v.values, 0.0) for v in vecs]).sum(axis=0)
    return np.where(present.sum(axis=0) == 1, values, np.nan)


def _clamp(func: str, vecs: list[Vec], bounds: list[np.ndarray]) -> list[Vec]:
    if func == "clamp":
        low, high = bounds
        keep = ~(high < low)  # clamp with max below min gives nothing at that step
        clamped = _each(vecs, lambda v: np.maximum(low, np.minimum(high, v)))
        return [Vec(v.labels, v.values, v.present & keep) for v in clamped]
    if func == "clamp_min":
        return _each(vecs, lambda v: np.maximum(v, bounds[0]))
    return _each(vecs, lambda v: np.minimum(v, bounds[0]))


def absent(vecs: list[Vec], labels: dict[str, str], size: int) -> list[Vec]:
    """Return 1 with ``labels`` at the steps where the vector has no series."""
    any_present = np.zeros(size, dtype=bool)
    for vec in vecs:
        any_present |= vec.present
    return [Vec(labels, np.where(any_present, np.nan, 1.0), ~any_present)]


def _compile(regex: str) -> re2._Regexp:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = REGEX_MAX_MEM
    try:
        return re2.compile(f"^(?:{regex})$", options)
    except re2.error as exc:
        raise EvalError(f"invalid regular expression in label_replace(): {regex}") from exc


def expand(template: str, match) -> str:
    """Return ``template`` with $1, ${1}, $name and ${name} filled in, as Go's Regexp.Expand."""

    def fill(found: re.Match) -> str:
        if found.group(0) == "$$":
            return "$"
        name = found.group(1) if found.group(1) is not None else found.group(2)
        try:
            group = match.group(int(name)) if name.isdigit() else match.group(name)
        except (IndexError, KeyError, ValueError, re2.error):
            return ""
        return group or ""

    return _TEMPLATE.sub(fill, template)


def label_replace(vecs: list[Vec], dst: str, replacement: str, src: str, regex: str) -> list[Vec]:
    """Return the series with ``dst`` set from ``src`` where ``regex`` matches it whole."""
    pattern = _compile(regex)
    if not _LABEL_NAME.fullmatch(dst):
        raise EvalError(f"invalid destination label name in label_replace(): {dst}")
    out = []
    for vec in vecs:
        found = pattern.match(vec.labels.get(src, ""))
        if found is None:
            out.append(vec)
            continue
        out.append(_with_label(vec, dst, expand(replacement, found)))
    return out


def label_join(vecs: list[Vec], dst: str, separator: str, sources: list[str]) -> list[Vec]:
    """Return the series with ``dst`` set to the ``sources`` labels' values joined."""
    if not _LABEL_NAME.fullmatch(dst):
        raise EvalError(f"invalid destination label name in label_join(): {dst}")
    for src in sources:
        if not _LABEL_NAME.fullmatch(src):
            raise EvalError(f"invalid source label name in label_join(): {src}")
    return [
        _with_label(vec, dst, separator.join(vec.labels.get(src, "") for src in sources))
        for vec in vecs
    ]


def _with_label(vec: Vec, name: str, value: str) -> Vec:
    """Return the series with a label set to ``value``, or without it for an empty value."""
    labels = {k: v for k, v in vec.labels.items() if k != name}
    if value:
        labels[name] = value
    return Vec(labels, vec.values, vec.present)


def _le(labels: dict[str, str]) -> float | None:
    text = labels.get("le")
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def histogram_quantile(phi: np.ndarray, vecs: list[Vec], size: int, tick: Tick) -> list[Vec]:
    """Return the φ-quantile of each classic histogram (series sharing labels but ``le``)."""
    groups: dict[tuple, list[tuple[float, Vec]]] = {}
    for vec in vecs:
        bound = _le(vec.labels)
        if bound is None:
            continue
        # Grouped with the name, as Prometheus does: two histograms of different names and
        # the same labels give two results of one label set, an error.
        rest = {k: v for k, v in vec.labels.items() if k != "le"}
        groups.setdefault(tuple(sorted(rest.items())), []).append((bound, vec))
    out = []
    for key, members in groups.items():
        values = np.full(size, np.nan)
        present = np.zeros(size, dtype=bool)
        for i in range(size):
            if i % TICK_EVERY == 0:
                tick()
            buckets = [(b, float(v.values[i])) for b, v in members if v.present[i]]
            if buckets:
                values[i], present[i] = bucket_quantile(float(phi[i]), buckets), True
        out.append(Vec(without_name(dict(key)), values, present))
    return out


def _date_part(func: str, seconds: np.ndarray) -> np.ndarray:
    """Return a calendar field (UTC) of unix seconds, as Prometheus' date functions."""
    finite = np.isfinite(seconds)
    whole = np.where(finite, np.trunc(seconds), 0).astype(np.int64).astype("datetime64[s]")
    day = whole.astype("datetime64[D]")
    month = whole.astype("datetime64[M]")
    year = whole.astype("datetime64[Y]")
    if func == "year":
        out = year.astype(np.int64) + 1970
    elif func == "month":
        out = month.astype(np.int64) % 12 + 1
    elif func == "day_of_month":
        out = (day - month.astype("datetime64[D]")).astype(np.int64) + 1
    elif func == "day_of_week":
        out = (day.astype(np.int64) + 4) % 7  # 1970-01-01 was a Thursday
    elif func == "day_of_year":
        out = (day - year.astype("datetime64[D]")).astype(np.int64) + 1
    elif func == "days_in_month":
        out = ((month + 1).astype("datetime64[D]") - month.astype("datetime64[D]")).astype(np.int64)
    elif func == "hour":
        out = (whole - day.astype("datetime64[s]")).astype(np.int64) // 3600
    else:  # minute
        out = (whole - day.astype("datetime64[s]")).astype(np.int64) % 3600 // 60
    return np.where(finite, out.astype(np.float64), np.nan)
