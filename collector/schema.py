"""The ingest wire contract shared by the agent and the service.

A batch is columnar JSON (optionally gzip-compressed)::

    {"batch_id": "4f1c...",                      # optional, for logs and replays
     "series": [{"name": "gpu_utilization_percent",
                 "labels": {"host": "gpu-node-1", "gpu": "0"},
                 "timestamps": [1733131200.0, 1733131215.0],   # unix seconds
                 "values": [35.0, 37.5]}],
     "events": [{"id": "xid-gpu-node-1-0-1733131230", "ts": 1733131230.0,
                 "kind": "gpu_xid", "summary": "XID 79 on GPU 0",
                 "labels": {"host": "gpu-node-1", "gpu": "0"}}]}

Each (series, timestamp) is stored once, so a replayed batch never double-counts;
each event is stored once per ``id``.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import TypedDict, TypeGuard, cast

MAX_SERIES_PER_BATCH = 10_000
MAX_SAMPLES_PER_BATCH = 1_000_000
MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_TIMESTAMP = 1e11  # unix seconds (year 5138): anything later is a unit mistake
MAX_NAME_LENGTH = 200
MAX_LABELS_PER_SERIES = 64
MAX_LABEL_VALUE_LENGTH = 2048  # characters; Mimir's default, ample for pod and model names
# JSON integers become float64 samples: anything a float cannot hold is refused, not rounded to inf.
MAX_NUMBER = 1.7976931348623157e308


class SeriesBounds(TypedDict, total=False):
    """The bounds one series is parsed under (``parse_series``); unset: the MAX_*."""

    max_labels: int
    max_label_value: int
    not_after: float | None  # refuse samples stamped then or later (a sender's clock is wrong)


class BatchBounds(SeriesBounds, total=False):
    """The bounds a pushed body is parsed under (each route's settings); unset: the MAX_*."""

    max_series: int
    max_samples: int


def series_bounds(bounds: BatchBounds) -> SeriesBounds:
    """Return the bounds ``parse_series`` takes of a body's bounds."""
    out = SeriesBounds()
    if "max_labels" in bounds:
        out["max_labels"] = bounds["max_labels"]
    if "max_label_value" in bounds:
        out["max_label_value"] = bounds["max_label_value"]
    if "not_after" in bounds:
        out["not_after"] = bounds["not_after"]
    return out


METRIC_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
# The service's one rule for stored text (correlator/text.py re-exports it): no unpaired
# surrogate, no control character (C0, DEL, C1); free text may hold tab, newline and CR.
_NOT_IN_A_NAME = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_NOT_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_NUMBER = (int, float)
_NUMBER_SET = frozenset(_NUMBER)


class BatchError(ValueError):
    """A batch that breaks the contract; ``path`` names the offending field."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(slots=True)
class SeriesBatch:
    """Samples of one series: metric name, labels and parallel arrays."""

    name: str
    labels: dict[str, str]
    timestamps: list[float]
    values: list[float]

    @property
    def key(self) -> str:
        """Return the stable identity of this series."""
        return series_key(self.name, self.labels)

    @property
    def ident(self) -> tuple:
        """Return the in-memory identity of this series (``series_ident``)."""
        return series_ident(self.name, self.labels)


@dataclass(slots=True)
class Event:
    """A point event on the timeline (GPU XID error, failed synthetic check...)."""

    id: str
    ts: float
    kind: str
    summary: str
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Batch:
    """One delivery from an agent."""

    series: list[SeriesBatch]
    events: list[Event] = field(default_factory=list)
    batch_id: str | None = None

    @property
    def sample_count(self) -> int:
        """Return the number of samples across all series."""
        return sum(len(s.timestamps) for s in self.series)

    def to_json(self) -> dict:
        """Return the wire form of this batch."""
        out: dict = {
            "series": [
                {"name": s.name, "labels": s.labels, "timestamps": s.timestamps, "values": s.values}
                for s in self.series
            ]
        }
        if self.events:
            out["events"] = [
                {"id": e.id, "ts": e.ts, "kind": e.kind, "summary": e.summary, "labels": e.labels}
                for e in self.events
            ]
        if self.batch_id:
            out["batch_id"] = self.batch_id
        return out


def series_key(name: str, labels: dict[str, str]) -> str:
    """Return a stable 32-hex-digit key for a metric name and label set."""
    # Length-prefixed fields make the encoding unambiguous whatever the label values hold.
    canonical = f"{len(name)}:{name}" + "".join(
        f"{len(k)}:{k}{len(v)}:{v}" for k, v in sorted(labels.items())
    )
    return hashlib.blake2b(canonical.encode(), digest_size=16).hexdigest()


def series_ident(name: str, labels: dict[str, str]) -> tuple:
    """Return a series' identity for in-memory lookups: its name, then its sorted labels.

    Equal exactly when ``series_key`` is, at a sixth of its cost: no text to build and hash.
    """
    return (name, *sorted(labels.items()))


def format_series(name: str, labels: dict[str, str]) -> str:
    """Return the PromQL-style text of a series, e.g. ``m{a="1"}``."""
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


# Callers check the length first (MAX_NAME_LENGTH), so only short names enter these caches.
@lru_cache(maxsize=4096)
def _label_name_ok(name: str) -> bool:
    return LABEL_NAME_RE.match(name) is not None


@lru_cache(maxsize=4096)
def _metric_name_ok(name: str) -> bool:
    return METRIC_NAME_RE.match(name) is not None


def text_problem(value: str, *, free: bool = False) -> str | None:
    """Return why ``value`` cannot be stored (a surrogate, a control character), or None."""
    found = (_NOT_IN_TEXT if free else _NOT_IN_A_NAME).search(value)
    if found is None:
        return None
    char, at = found.group(), found.start()
    if char == "\x00":
        return f"must not contain NUL characters (at character {at})"
    if "\ud800" <= char <= "\udfff":
        where = f"U+{ord(char):04X} at character {at}"
        return f"must not contain unpaired surrogates ({where}): not valid Unicode text"
    why = f"must not contain control characters (U+{ord(char):04X} at character {at})"
    if char in "\t\n\r":
        return why + "; tab and newline belong only in free text such as a summary"
    return why


def _label_value_problem(value: str) -> str | None:
    """Return why a label value cannot be stored (a control character, a surrogate), or None."""
    if value.isprintable():  # the common case, one C loop; its refusals need a closer look
        return None
    problem = text_problem(value)  # None for a space other than ' ' (U+00A0...): kept
    return problem and f"label value {problem}"


def check_labels(
    obj: object,
    path: str,
    *,
    max_labels: int = MAX_LABELS_PER_SERIES,
    max_value: int = MAX_LABEL_VALUE_LENGTH,
) -> dict[str, str]:
    """Validate a label set (names, none reserved, string values, sizes, text); return it."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise BatchError(path, "must be an object of string values")
    if len(obj) > max_labels:
        raise BatchError(path, f"{len(obj)} labels exceed the limit of {max_labels}")
    for k, v in obj.items():
        if len(k) > MAX_NAME_LENGTH or not _label_name_ok(k):
            raise BatchError(
                f"{path}.{k[:80]}", "label name must match [a-zA-Z_][a-zA-Z0-9_]*, <= 200 chars"
            )
        if k.startswith("__"):  # as in Prometheus; a __name__ label would hide the real name
            raise BatchError(
                f"{path}.{k}",
                "label names starting with __ are reserved (the metric name goes in 'name')",
            )
        if type(v) is not str:
            raise BatchError(f"{path}.{k}", f"label value must be a string, got {type(v).__name__}")
        if len(v) > max_value:
            raise BatchError(
                f"{path}.{k}", f"label value of {len(v)} chars exceeds the limit of {max_value}"
            )
        if problem := _label_value_problem(v):
            raise BatchError(f"{path}.{k}", problem)
    return obj


def _all_finite_numbers(items: list) -> bool:
    """Return True when every item is an int or float and finite (the common, fast case)."""
    try:
        return _NUMBER_SET.issuperset(map(type, items)) and math.isfinite(sum(items))
    except OverflowError:  # an integer too large for a float: the slow path names it
        return False


def _in_float_range(v: int | float) -> bool:
    return type(v) is float or -MAX_NUMBER <= v <= MAX_NUMBER


def _timestamp_ok(t: object) -> TypeGuard[int | float]:
    """Return True for unix seconds: a finite number in [0, MAX_TIMESTAMP)."""
    if type(t) not in _NUMBER:
        return False
    n = cast("int | float", t)
    return _in_float_range(n) and math.isfinite(n) and 0 <= n < MAX_TIMESTAMP


def _in_time_range(stamps: list, last: float) -> bool:
    """Return True when finite numbers all lie in [0, last)."""
    ordered = sorted(stamps)  # one C pass over ordered input: cheaper than min() and max()
    return not ordered or (ordered[0] >= 0 and ordered[-1] < last)


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _ahead(path: str, t: float, not_after: float) -> BatchError:
    """Return the error of a timestamp past the latest one the receiver accepts."""
    return BatchError(
        path,
        f"timestamp {t!r:.80} ({_utc(t)}) is later than the latest this service accepts, "
        f"{_utc(not_after)} (its clock plus max_future_seconds): check the sender's clock",
    )


def _lone_float(obj: object) -> float | None:
    """Return the float of a one-float list (an agent's one point a series), else None."""
    if type(obj) is list and len(obj) == 1 and type(obj[0]) is float:
        return obj[0]
    return None


def _timestamps(obj: object, path: str, not_after: float | None) -> list[float]:
    last = MAX_TIMESTAMP if not_after is None else min(MAX_TIMESTAMP, not_after)
    lone = _lone_float(obj)
    if lone is not None and 0 <= lone < last:
        return cast("list[float]", obj)
    if type(obj) is list and _all_finite_numbers(obj) and _in_time_range(obj, last):
        return obj
    if not isinstance(obj, list):
        raise BatchError(path, "must be an array of unix seconds")
    for i, t in enumerate(obj):
        if not _timestamp_ok(t):
            raise BatchError(
                f"{path}[{i}]", f"timestamp must be unix seconds in [0, 1e11), got {t!r:.80}"
            )
        if not_after is not None and t >= not_after:
            raise _ahead(f"{path}[{i}]", t, not_after)
    return obj


def _values(obj: object, path: str, allow_non_finite: bool) -> list[float]:
    lone = _lone_float(obj)
    if lone is not None and math.isfinite(lone):
        return cast("list[float]", obj)
    if type(obj) is list and _all_finite_numbers(obj):
        return obj
    if not isinstance(obj, list):
        raise BatchError(path, "must be an array of numbers")
    for i, v in enumerate(obj):
        if type(v) not in _NUMBER:
            raise BatchError(f"{path}[{i}]", f"value must be a number, got {v!r:.80}")
        if not _in_float_range(v):
            raise BatchError(
                f"{path}[{i}]", "value out of range: an integer too large for a 64-bit float"
            )
        if not allow_non_finite and not math.isfinite(v):
            raise BatchError(f"{path}[{i}]", f"value must be finite, got {v!r}")
    return obj


def parse_series(
    obj: object,
    path: str,
    *,
    allow_non_finite: bool = False,
    max_labels: int = MAX_LABELS_PER_SERIES,
    max_label_value: int = MAX_LABEL_VALUE_LENGTH,
    not_after: float | None = None,
) -> SeriesBatch:
    """Validate one series object of the wire form (``path`` names it in errors).

    With ``not_after``, timestamps from then on are refused: a sender whose clock is wrong.
    """
    if not isinstance(obj, dict):
        raise BatchError(path, "must be an object with name, labels, timestamps, values")
    name = obj.get("name")
    if type(name) is not str or not name:
        raise BatchError(f"{path}.name", "metric name must be a non-empty string")
    if len(name) > MAX_NAME_LENGTH or not _metric_name_ok(name):
        raise BatchError(
            f"{path}.name", f"invalid metric name {name[:80]!r} (Prometheus syntax, <= 200 chars)"
        )
    labels = check_labels(
        obj.get("labels"), path + ".labels", max_labels=max_labels, max_value=max_label_value
    )
    ts = _timestamps(obj.get("timestamps"), path + ".timestamps", not_after)
    values = _values(obj.get("values"), path + ".values", allow_non_finite)
    if len(ts) != len(values):
        raise BatchError(
            path, f"timestamps ({len(ts)}) and values ({len(values)}) differ in length"
        )
    return SeriesBatch(name, labels, ts, values)


def parse_event(
    obj: object,
    path: str,
    *,
    max_labels: int = MAX_LABELS_PER_SERIES,
    max_label_value: int = MAX_LABEL_VALUE_LENGTH,
    not_after: float | None = None,
) -> Event:
    """Validate one event object of the wire form (``not_after`` as for ``parse_series``)."""
    if not isinstance(obj, dict):
        raise BatchError(path, "must be an object with id, ts, kind, summary")
    for key, limit in (("id", MAX_NAME_LENGTH), ("kind", 64), ("summary", 10_000)):
        value = obj.get(key)
        if not isinstance(value, str) or not value or len(value) > limit or "\x00" in value:
            raise BatchError(
                f"{path}.{key}", f"must be a non-empty string of <= {limit} chars, without NUL"
            )
    ts = obj.get("ts")
    if not _timestamp_ok(ts):
        raise BatchError(
            f"{path}.ts", f"timestamp must be unix seconds in [0, 1e11), got {ts!r:.80}"
        )
    if not_after is not None and ts >= not_after:
        raise _ahead(f"{path}.ts", ts, not_after)
    labels = check_labels(
        obj.get("labels"), f"{path}.labels", max_labels=max_labels, max_value=max_label_value
    )
    return Event(
        id=obj["id"], ts=float(ts), kind=obj["kind"], summary=obj["summary"], labels=labels
    )


def parse_batch(
    obj: object,
    *,
    max_series: int = MAX_SERIES_PER_BATCH,
    max_samples: int = MAX_SAMPLES_PER_BATCH,
    max_labels: int = MAX_LABELS_PER_SERIES,
    max_label_value: int = MAX_LABEL_VALUE_LENGTH,
    not_after: float | None = None,
) -> Batch:
    """Validate a decoded batch; raise ``BatchError`` naming the first bad field.

    With ``not_after``, a sample or event stamped then or later is refused (``parse_series``).
    """
    if not isinstance(obj, dict):
        raise BatchError("body", "must be a JSON object with a 'series' array")
    raw_series = obj.get("series", [])
    if not isinstance(raw_series, list):
        raise BatchError("series", "must be an array")
    if len(raw_series) > max_series:
        raise BatchError("series", f"{len(raw_series)} series exceed the limit of {max_series}")
    series = [
        parse_series(
            s,
            f"series[{i}]",
            max_labels=max_labels,
            max_label_value=max_label_value,
            not_after=not_after,
        )
        for i, s in enumerate(raw_series)
    ]
    total = sum(len(s.timestamps) for s in series)
    if total > max_samples:
        raise BatchError("series", f"{total} samples exceed the limit of {max_samples}")
    raw_events = obj.get("events", [])
    if not isinstance(raw_events, list):
        raise BatchError("events", "must be an array")
    events = [
        parse_event(
            e,
            f"events[{i}]",
            max_labels=max_labels,
            max_label_value=max_label_value,
            not_after=not_after,
        )
        for i, e in enumerate(raw_events)
    ]
    batch_id = obj.get("batch_id")
    if batch_id is not None and not isinstance(batch_id, str):
        raise BatchError("batch_id", "must be a string")
    return Batch(series=series, events=events, batch_id=batch_id)
