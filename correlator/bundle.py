"""Read and write incident bundles (the folder format of shared FORMAT.md)."""

from __future__ import annotations

import gc
import gzip
import math
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, overload

import numpy as np
import orjson

from collector.schema import MAX_LABEL_VALUE_LENGTH, MAX_LABELS_PER_SERIES
from correlator.limits import MAX_DESCRIPTION, MAX_NAME, MAX_SUMMARY, MAX_TS
from correlator.records.sla import rule_problem
from correlator.text import dotted, first_bad_text, printable, text_problem

# A bundle file (or a stored baseline) is refused past this size once inflated; the public
# scenarios inflate to about 10 MB. ``causeline import --max-file-bytes`` raises it.
MAX_FILE_BYTES = 512 * 1024 * 1024


class BundleError(ValueError):
    """A bundle that cannot be read; names the file and what is wrong."""

    def __init__(self, file: Path | str, message: str):
        super().__init__(f"{file}: {message}")
        self.file = str(file)
        self.message = message


@dataclass(slots=True)
class Series:
    """One series: metric name, labels, and float64 arrays of unix seconds and values."""

    name: str
    labels: dict[str, str]
    ts: np.ndarray
    values: np.ndarray


@dataclass
class Bundle:
    """Everything needed to analyse one incident offline."""

    series: list[Series]
    changes: list[dict]
    topology: dict
    sla: dict
    baseline: list[Series] | None = None
    path: Path | None = None
    extra: dict = field(default_factory=dict)


def format_value(value: float) -> str:
    """Format a float the way Prometheus writes sample values."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _too_large(path: Path | str, max_bytes: int, what: str) -> BundleError:
    return BundleError(
        path, f"{what} more than {max_bytes} bytes (the limit; raise it with --max-file-bytes)"
    )


# Reading a matrix takes about 11 bytes of memory per inflated byte, and JSON compresses
# 5 to 10 times, so past RATIO_FREE_BYTES a file that inflates to more than MAX_INFLATE_RATIO
# times its compressed size is a gzip bomb: refused while it inflates, in steps.
MAX_INFLATE_RATIO = 100
RATIO_FREE_BYTES = 16 * 1024 * 1024
_INFLATE_STEP = 4 * 1024 * 1024


def inflate(
    raw: bytes,
    path: Path | str,
    max_bytes: int = MAX_FILE_BYTES,
    *,
    max_ratio: int = MAX_INFLATE_RATIO,
    ratio_free: int = RATIO_FREE_BYTES,
) -> bytes:
    """Return one whole gzip member inflated; refuse past the bounds, truncated or several."""
    bound = min(max_bytes, max(ratio_free, max_ratio * len(raw)))
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    data = raw
    try:
        while not inflater.eof and len(out) <= bound:
            step = min(_INFLATE_STEP, bound + 1 - len(out))
            piece = inflater.decompress(data, step)
            out += piece
            data = inflater.unconsumed_tail
            if not data and len(piece) < step:  # all read and nothing held back
                break
    except zlib.error as exc:
        raise BundleError(path, f"not valid gzip: {exc}") from exc
    if len(out) > max_bytes:
        raise _too_large(path, max_bytes, "inflates to")
    if len(out) > bound:
        raise BundleError(
            path,
            f"inflates to more than {max_ratio} times its {len(raw)} compressed bytes, as a "
            "gzip bomb does; if the file is genuine, gunzip it and import the plain JSON",
        )
    if not inflater.eof:
        raise BundleError(path, "truncated gzip: the file ends before the compressed data does")
    if inflater.unused_data:
        raise BundleError(
            path,
            f"{len(inflater.unused_data)} bytes follow the first gzip member (concatenated or "
            "padded files are not read); compress the JSON as one gzip member",
        )
    return bytes(out)


def _read_bytes(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    try:
        if path.stat().st_size > max_bytes:
            raise _too_large(path, max_bytes, "holds")
        raw = path.read_bytes()
    except OSError as exc:
        raise BundleError(path, f"cannot read: {exc}") from exc
    return inflate(raw, path, max_bytes) if path.suffix == ".gz" else raw


def _parse_json(raw: bytes, path: Path | str):
    # Millions of small lists make the cyclic GC run over and over; none of them are cycles.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BundleError(path, f"broken JSON: {exc}") from exc
    finally:
        if was_enabled:
            gc.enable()


def _load_json(path: Path, max_bytes: int = MAX_FILE_BYTES):
    return _parse_json(_read_bytes(path, max_bytes), path)


_VALUES = re.compile(rb'"values"\s*:\s*\[(?:\s*\]|.*?\]\s*\])', re.S)
_STRIP = bytes.maketrans(b"", b"")
_NUMBER_TEXT = b"0123456789.eE+-,"  # all a list of JSON numbers holds (NaN, Inf, true: not)


def _numbers(flat: bytes) -> np.ndarray:
    """Return comma-separated numbers as float64, each as ``float()`` reads its text.

    orjson reads JSON numbers about 6 times as fast as numpy's text parser, rounding alike;
    numpy takes what JSON cannot hold: NaN, +Inf, -Inf, a -0 (orjson's int 0 drops the
    sign), a number past float64's range. Anything else is numpy's to refuse (ValueError).
    """
    if not flat.translate(None, _NUMBER_TEXT) and b",-0," not in b"," + flat + b",":
        try:
            return np.array(orjson.loads(b"[" + flat + b"]"), dtype=np.float64)
        except orjson.JSONDecodeError:
            pass
    return np.fromstring(flat, sep=",")  # C parser; the sep= form is not deprecated


def _pairs(segment: bytes) -> np.ndarray | None:
    """Parse ``[[t,"v"],...]`` in C; None when the text is not plain numbers."""
    body = segment[segment.index(b"[") + 1 : segment.rindex(b"]")]
    flat = body.translate(_STRIP, b'[]" \t\r\n')
    if not flat:
        return np.empty((0, 2))
    try:
        arr = _numbers(flat)
    except ValueError:  # a word numpy cannot read: the full parse names where it is
        return None
    if arr.size != flat.count(b",") + 1 or arr.size % 2:
        return None
    return arr.reshape(-1, 2)


def _cut_values(raw: bytes) -> tuple[list[bytes], bytes]:
    """Split out every ``"values":[...]`` array, leaving its index in the JSON skeleton."""
    if b"\n" in raw:  # pretty-printed: arrays may hold whitespace, use the regex
        segments: list[bytes] = []

        def cut(match: re.Match) -> bytes:
            segments.append(match.group(0))
            return b'"values":%d' % (len(segments) - 1)

        return segments, _VALUES.sub(cut, raw)
    segments, parts, pos = [], [], 0
    while (start := raw.find(b'"values":[', pos)) >= 0:
        body = start + len(b'"values":')
        end = body + 2 if raw.startswith(b"[]", body) else raw.find(b"]]", body) + 2
        if end < 2:
            break
        parts += [raw[pos:start], b'"values":%d' % len(segments)]
        segments.append(raw[start:end])
        pos = end
    parts.append(raw[pos:])
    return segments, b"".join(parts)


def _load_matrix(path: Path, max_bytes: int = MAX_FILE_BYTES) -> list[Series]:
    """Read a query_range file, parsing the sample arrays in C and the rest with orjson."""
    series = load_matrix(_read_bytes(path, max_bytes), path)
    for i, s in enumerate(series):  # a file's text, not a stored recording's: that stays readable
        problem = text_problem(s.name)
        if problem:
            raise BundleError(path, f"data.result[{i}].metric.__name__: {problem}")
        _check_label_text(s.labels, path, f"data.result[{i}].metric")
    return series


def load_matrix(raw: bytes, path: Path | str) -> list[Series]:
    """Parse query_range JSON text into series; ``path`` names the source in errors."""
    segments, skeleton = _cut_values(raw)
    doc = _parse_json(skeleton, path)
    try:
        result = doc["data"]["result"]
        placed = [item["values"] for item in result]
    except (TypeError, KeyError):
        return parse_matrix(_parse_json(raw, path), path)
    if placed != list(range(len(segments))):
        return parse_matrix(_parse_json(raw, path), path)
    arrays = [_pairs(seg) for seg in segments]
    if any(a is None for a in arrays):
        return parse_matrix(_parse_json(raw, path), path)
    for item, arr in zip(result, arrays, strict=True):
        item["values"] = arr
    return parse_matrix(doc, path)


@overload
def _find(folder: Path, stem: str, required: Literal[True]) -> Path: ...


@overload
def _find(folder: Path, stem: str, required: bool) -> Path | None: ...


def _find(folder: Path, stem: str, required: bool) -> Path | None:
    inside = folder.resolve()
    for candidate in (folder / f"{stem}.json", folder / f"{stem}.json.gz"):
        if candidate.is_symlink() and not candidate.resolve().is_relative_to(inside):
            raise BundleError(
                candidate,
                f"is a link to {candidate.resolve()}, outside the bundle folder; "
                "copy the file into the bundle",
            )
        if candidate.is_file():
            return candidate
    if required:
        raise BundleError(folder / f"{stem}.json", "missing (required by the bundle format)")
    return None


def _sample_arrays(values: object, path: Path | str, where: str) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(values, np.ndarray):  # pairs already parsed by _load_matrix
        return values[:, 0].copy(), values[:, 1].copy()
    if not isinstance(values, list):
        raise BundleError(path, f"{where}.values: must be a list of [time, value] pairs")
    try:
        ts = np.fromiter((p[0] for p in values), np.float64, len(values))
        vs = np.array([p[1] for p in values], dtype=np.float64)
    except (TypeError, ValueError, IndexError, KeyError) as exc:
        raise BundleError(
            path, f'{where}.values: each sample must be [unix_seconds, "value"] ({exc})'
        ) from exc
    return ts, vs


def parse_matrix(doc: object, path: Path | str) -> list[Series]:
    """Convert a Prometheus ``query_range`` response into series."""
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict):
        raise BundleError(path, 'expected a query_range response {"status", "data": {...}}')
    if doc.get("status", "success") != "success":
        raise BundleError(path, f"status is {doc.get('status')!r}, not 'success'")
    data = doc["data"]
    if data.get("resultType") != "matrix":
        raise BundleError(path, f"resultType is {data.get('resultType')!r}, expected 'matrix'")
    result = data.get("result")
    if not isinstance(result, list):
        raise BundleError(path, "data.result must be a list")
    out = []
    for i, item in enumerate(result):
        where = f"data.result[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            raise BundleError(path, f"{where}: expected an object with 'metric' and 'values'")
        labels = dict(item["metric"])
        name = labels.pop("__name__", None)
        if not isinstance(name, str) or not name:
            raise BundleError(path, f"{where}.metric: '__name__' is missing or empty")
        if not all(isinstance(v, str) for v in labels.values()):
            raise BundleError(path, f"{where}.metric: label values must be strings")
        _check_labels(labels, path, f"{where}.metric", MAX_LABEL_VALUE_LENGTH)
        ts, vs = _sample_arrays(item.get("values"), path, where)
        if not np.all(np.isfinite(ts)):
            raise BundleError(path, f"{where}.values: timestamps must be finite numbers")
        if ts.size > 1 and np.any(np.diff(ts) <= 0):
            order = np.argsort(ts, kind="stable")
            ts, vs = ts[order], vs[order]
            keep = np.concatenate(([True], np.diff(ts) > 0))
            ts, vs = ts[keep], vs[keep]
        out.append(Series(name=name, labels=labels, ts=ts, values=vs))
    return out


def _check_labels(labels: dict, path: Path | str, where: str, max_value: int) -> None:
    if len(labels) > MAX_LABELS_PER_SERIES:
        raise BundleError(
            path, f"{where}: {len(labels)} labels exceed the limit of {MAX_LABELS_PER_SERIES}"
        )
    for k, v in labels.items():
        if len(k) > MAX_NAME or (isinstance(v, str) and len(v) > max_value):
            raise BundleError(
                path, f"{where}.{k[:80]}: label longer than the limit ({MAX_NAME} / {max_value})"
            )
        if "\x00" in k or (isinstance(v, str) and "\x00" in v):
            raise BundleError(path, f"{where}.{k[:80]}: labels must not contain NUL characters")


def _check_label_text(labels: dict, path: Path | str, where: str) -> None:
    """Refuse surrogates and control characters in label names and string values."""
    for k, v in labels.items():
        problem = text_problem(k) or (text_problem(v) if isinstance(v, str) else None)
        if problem:
            raise BundleError(path, f"{where}.{printable(k[:80])}: labels {problem}")


def _check_text(doc: object, path: Path | str) -> None:
    """Refuse surrogates and control characters in keys and strings, as the API does."""
    found = first_bad_text(doc)
    if found is not None:
        where, problem = found
        raise BundleError(path, f"{printable(dotted(where)) if where else 'value'}: {problem}")


def _check_name(value: object, path: Path | str, where: str) -> None:
    if not isinstance(value, str) or not value:
        raise BundleError(path, f"{where}: must be a non-empty string")
    if len(value) > MAX_NAME or "/" in value:
        raise BundleError(path, f"{where}: must be at most {MAX_NAME} characters, without '/'")


def _check_seconds(value: object, path: Path | str, where: str) -> None:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or not 0 <= value < MAX_TS
    ):
        raise BundleError(path, f"{where}: must be unix seconds in [0, 1e11), got {value!r:.80}")


def _check_changes(changes: object, path: Path) -> list[dict]:
    if not isinstance(changes, list):
        raise BundleError(path, "must be a list of change events")
    for i, c in enumerate(changes):
        if not isinstance(c, dict):
            raise BundleError(path, f"[{i}]: must be an object")
        for key in ("id", "kind"):
            if not isinstance(c.get(key), str) or not c[key]:
                raise BundleError(path, f"[{i}].{key}: must be a non-empty string")
        _check_name(c["id"], path, f"[{i}].id")
        _check_seconds(c.get("ts"), path, f"[{i}].ts")
        if not isinstance(c.get("labels", {}), dict):
            raise BundleError(path, f"[{i}].labels: must be an object")
        _check_labels(c.get("labels", {}), path, f"[{i}].labels", MAX_NAME)
        if len(str(c.get("summary") or "")) > MAX_SUMMARY:
            raise BundleError(path, f"[{i}].summary: longer than {MAX_SUMMARY} characters")
    _check_text(changes, path)
    return changes


def _check_topology(topology: object, path: Path) -> dict:
    if not isinstance(topology, dict):
        raise BundleError(path, 'must be an object {"nodes": [...], "edges": [...]}')
    nodes, edges = topology.get("nodes", []), topology.get("edges", [])
    if not isinstance(nodes, list) or not isinstance(edges, list):
        raise BundleError(path, "'nodes' and 'edges' must be lists")
    for i, n in enumerate(nodes):
        if not isinstance(n, dict) or not isinstance(n.get("id"), str):
            raise BundleError(path, f"nodes[{i}]: must be an object with a string 'id'")
    for i, e in enumerate(edges):
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("from", "to")):
            raise BundleError(path, f"edges[{i}]: must be an object with string 'from' and 'to'")
    return {"nodes": nodes, "edges": edges}


def check_sla(sla: object, path: Path | str) -> dict:
    """Check an SLA against its record (``correlator.records.sla``); errors name the field."""
    if not isinstance(sla, dict):
        raise BundleError(path, "must be an object")
    _check_name(sla.get("name"), path, "'name'")
    _check_text(sla, path)
    if not isinstance(sla.get("labels", {}), dict):
        raise BundleError(path, "'labels' must be an object")
    _check_labels(sla.get("labels", {}), path, "'labels'", MAX_NAME)
    if len(str(sla.get("description") or "")) > MAX_DESCRIPTION:
        raise BundleError(path, f"'description' is longer than {MAX_DESCRIPTION} characters")
    problem = rule_problem(sla)
    if problem:
        raise BundleError(path, problem)
    if sla.get("breach_start") is not None:
        return sla
    if sla.get("op") is None:
        raise BundleError(path, "'op' must be '>' or '<' (or give 'breach_start')")
    if sla.get("threshold") is None:
        raise BundleError(path, "'threshold' must be a number in ±1e15 (or give 'breach_start')")
    return sla


def read_bundle(folder: Path | str, *, max_bytes: int = MAX_FILE_BYTES) -> Bundle:
    """Read a bundle folder; raise ``BundleError`` naming the file on any problem."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BundleError(folder, "not a folder")
    metrics_path = _find(folder, "metrics", required=True)
    changes_path = _find(folder, "changes", required=True)
    topology_path = _find(folder, "topology", required=True)
    sla_path = _find(folder, "sla", required=True)
    baseline_path = _find(folder, "baseline", required=False)
    topology = _load_json(topology_path, max_bytes)
    _check_text(topology, topology_path)
    return Bundle(
        series=_load_matrix(metrics_path, max_bytes),
        changes=_check_changes(_load_json(changes_path, max_bytes), changes_path),
        topology=_check_topology(topology, topology_path),
        sla=check_sla(_load_json(sla_path, max_bytes), sla_path),
        baseline=_load_matrix(baseline_path, max_bytes) if baseline_path else None,
        path=folder,
    )


def format_values(values: np.ndarray) -> list[str]:
    """Return ``format_value`` of each value, working on the whole array at once."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        whole = (np.abs(values) < 1e15) & (values == np.trunc(values))
    out = [repr(v) for v in values.tolist()]
    for i, v in zip(np.flatnonzero(whole).tolist(), values[whole].tolist(), strict=True):
        out[i] = str(int(v))
    for i in np.flatnonzero(~np.isfinite(values)).tolist():
        out[i] = format_value(float(values[i]))
    return out


def _seconds_to_ms(ts: np.ndarray) -> list[float]:
    """Return times rounded to the millisecond (``round(t, 3)``), at once when already exact."""
    ts = np.asarray(ts, dtype=np.float64)
    if np.array_equal(np.rint(ts * 1000) / 1000, ts):
        return ts.tolist()
    return [round(t, 3) for t in ts.tolist()]


def matrix_document(series: list[Series]) -> dict:
    """Return the Prometheus ``query_range`` response form of series."""
    result: list[dict[str, object]] = []
    for s in series:
        pairs = zip(_seconds_to_ms(s.ts), format_values(s.values), strict=True)
        values = [[t, v] for t, v in pairs]
        result.append({"metric": {"__name__": s.name, **s.labels}, "values": values})
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def _refuse_links(folder: Path, names: list[str]) -> None:
    """Raise ``BundleError`` when the folder or a file to write is a link or not writable."""
    if folder.is_symlink():
        raise BundleError(folder, "is a link; export does not write through links")
    if folder.exists() and not folder.is_dir():
        raise BundleError(folder, "exists and is not a folder; choose a folder to write")
    for name in names:
        target = folder / name
        if target.is_symlink():
            raise BundleError(
                target, "is a link; export does not write through links (remove it first)"
            )
        if target.exists() and not target.is_file():
            raise BundleError(target, "exists and is not a file")


def _write_file(path: Path, data: bytes) -> None:
    """Write a file without following a link put there since the check."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise BundleError(path, f"cannot write: {exc.strerror}") from exc
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_bundle(folder: Path | str, bundle: Bundle) -> Path:
    """Write a bundle folder (metrics gzip-compressed) and return its path; never via links."""
    folder = Path(folder)
    opts = orjson.OPT_INDENT_2
    files = {
        "metrics.json.gz": lambda: gzip.compress(
            orjson.dumps(matrix_document(bundle.series)), compresslevel=6
        ),
        "changes.json": lambda: orjson.dumps(bundle.changes, option=opts),
        "topology.json": lambda: orjson.dumps(bundle.topology, option=opts),
        "sla.json": lambda: orjson.dumps(bundle.sla, option=opts),
    }
    if baseline := bundle.baseline:
        files["baseline.json.gz"] = lambda: gzip.compress(
            orjson.dumps(matrix_document(baseline)), compresslevel=6
        )
    _refuse_links(folder, list(files))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BundleError(folder, f"cannot create the folder: {exc.strerror}") from exc
    for name, render in files.items():
        _write_file(folder / name, render())
    return folder
