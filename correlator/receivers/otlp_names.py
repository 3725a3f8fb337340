"""Prometheus names for OTLP metrics and labels for OTLP attributes.

Metric names follow Prometheus' OTLP translator (underscore escaping with suffixes): the name
is cut into runs of ASCII letters and digits joined by ``_``; the unit is appended in
Prometheus words (``s`` -> ``seconds``, ``By/s`` -> ``bytes_per_second``; ``{...}``
annotations and ``1`` add nothing) unless the name already holds that word; a monotonic sum
ends in ``_total``; a gauge of unit ``1`` ends in ``_ratio``; a leading digit gets a ``_``.

Attribute keys become label names with every character outside ``[a-zA-Z0-9_]`` turned into
``_``, and ``key_`` put before a leading digit, ``key`` before a leading ``_``. Keys that
collide join their values with ``;`` in key order, as Prometheus does. Of the resource
attributes only those in ``RESOURCE_LABELS`` become labels; data point attributes win over
them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

UNITS = {
    "d": "days",
    "h": "hours",
    "min": "minutes",
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
    "By": "bytes",
    "KiBy": "kibibytes",
    "MiBy": "mebibytes",
    "GiBy": "gibibytes",
    "TiBy": "tebibytes",
    "KBy": "kilobytes",
    "MBy": "megabytes",
    "GBy": "gigabytes",
    "TBy": "terabytes",
    "m": "meters",
    "V": "volts",
    "A": "amperes",
    "J": "joules",
    "W": "watts",
    "g": "grams",
    "Cel": "celsius",
    "Hz": "hertz",
    "1": "",
    "%": "percent",
}
PER_UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week"}
PER_UNITS |= {"mo": "month", "y": "year"}
# Resource attributes that become labels (the causeline vocabulary); the rest are dropped.
RESOURCE_LABELS = {
    "service.name": "service",
    "service.instance.id": "instance",
    "host.name": "host",
}
_TOKENS = re.compile(r"[A-Za-z0-9]+")
_NOT_LABEL = re.compile(r"[^A-Za-z0-9_]")


def _unit_word(unit: str, table: dict[str, str]) -> str:
    unit = unit.strip()
    if not unit or "{" in unit or "}" in unit:
        return ""
    return "_".join(_TOKENS.findall(table.get(unit, unit)))


def metric_name(name: str, unit: str, *, counter: bool = False, gauge: bool = False) -> str:
    """Return the Prometheus name of an OTLP metric (``counter``: a monotonic sum)."""
    tokens = _TOKENS.findall(name)
    main, _, per = unit.partition("/")
    word = _unit_word(main, UNITS)
    if word and word not in tokens:
        tokens.append(word)
    per_word = _unit_word(per, PER_UNITS)
    if per_word and per_word not in tokens:
        tokens += ["per", per_word]
    if counter:
        tokens = [t for t in tokens if t != "total"] + ["total"]
    if gauge and unit == "1":
        tokens = [t for t in tokens if t != "ratio"] + ["ratio"]
    out = "_".join(tokens)
    return "_" + out if out[:1].isdigit() else out


@lru_cache(maxsize=4096)
def label_name(key: str) -> str:
    """Return the label name for an attribute key."""
    label = _NOT_LABEL.sub("_", key)
    if label[:1].isdigit():
        return "key_" + label
    return "key" + label if label.startswith("_") else label


def _plain(value):
    """Return an AnyValue as a Python value (None when unset)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_plain(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _plain(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def value_text(value) -> str:
    """Return an attribute value (AnyValue) as label text: numbers plainly, lists as JSON."""
    plain = _plain(value)
    if plain is None:
        return ""
    if isinstance(plain, bool):
        return "true" if plain else "false"
    if isinstance(plain, float):
        return np.format_float_positional(plain, trim="-") if np.isfinite(plain) else str(plain)
    if isinstance(plain, list | dict):
        return json.dumps(plain, separators=(",", ":"), sort_keys=True)
    return str(plain)


def labels_of(attributes: Iterable, *, only: dict[str, str] | None = None) -> dict[str, str]:
    """Return labels for OTLP attributes (KeyValue); ``only`` maps the keys kept to labels."""
    found: list[tuple[str, str, str]] = []
    for kv in attributes:
        if only is not None and kv.key not in only:
            continue
        value = kv.value
        is_text = value.WhichOneof("value") == "string_value"
        text = value.string_value if is_text else value_text(value)
        if text:  # an empty value is no label, as in Prometheus
            name = only[kv.key] if only is not None else label_name(kv.key)
            found.append((name, kv.key, text))
    out = {name: text for name, _, text in found}
    if len(out) < len(found):  # keys that collide join their values in key order
        for name in {n for n, _, _ in found}:
            out[name] = ";".join(t for n, _, t in sorted(found, key=lambda f: f[1]) if n == name)
    return out


def bound_text(bound: float) -> str:
    """Return a bucket bound as Prometheus' translator writes ``le`` (``0.005``, ``10``)."""
    return np.format_float_positional(bound, trim="-")
