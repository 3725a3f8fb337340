"""Write an evaluation's value as Prometheus' query API answers it, one series at a time.

Each series is written straight into one growing buffer, so a large answer holds its bytes
and the evaluator's arrays, never a Python list per point; ``tick()`` runs between series
and can stop a write past its deadline.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import orjson

from correlator.promql.values import EvalError, Value

POSITIONAL = (1e-4, 1e16)  # magnitudes whose repr() is already Prometheus' positional text


def sample_text(value: float) -> str:
    """Return a sample value as Prometheus writes it (NaN, +Inf, -Inf, shortest decimal)."""
    if POSITIONAL[0] <= abs(value) < POSITIONAL[1] or value == 0:
        text = repr(value)  # shortest round-trip digits, as Go's FormatFloat(v, 'f', -1)
        return text[:-2] if text.endswith(".0") else text
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return np.format_float_positional(value, trim="-")


def time_text(ms: int) -> str:
    """Return an evaluation time (unix ms) in seconds, as Prometheus writes it."""
    sign, ms = ("-", -ms) if ms < 0 else ("", ms)
    seconds, millis = divmod(ms, 1000)
    return f"{sign}{seconds}" + (f".{millis:03d}".rstrip("0") if millis else "")


def _points(times: list[str], idx: list[int], values: list[float]) -> str:
    return ",".join(f'[{times[i]},"{sample_text(v)}"]' for i, v in zip(idx, values, strict=True))


def encode(
    value: Value,
    steps: np.ndarray,
    *,
    instant: bool,
    tick: Callable[[], None],
    max_bytes: int,
) -> bytes | memoryview:
    """Return the success document for ``value`` at ``steps`` (int64 unix ms).

    A large answer grows in one buffer (no copy at the end); raises EvalError once the text
    passes ``max_bytes``.
    """
    times = [time_text(int(t)) for t in steps]
    if isinstance(value, np.ndarray):
        if instant:
            body = f'"resultType":"scalar","result":[{times[0]},"{sample_text(float(value[0]))}"]'
        else:
            every = list(range(len(times)))
            points = _points(times, every, value.tolist())
            body = f'"resultType":"matrix","result":[{{"metric":{{}},"values":[{points}]}}]'
        return f'{{"status":"success","data":{{{body}}}}}'.encode()
    out = bytearray(b'{"status":"success","data":{"resultType":"')
    out += b'vector","result":[' if instant else b'matrix","result":['
    for n, vec in enumerate(value):
        tick()
        out += b',{"metric":' if n else b'{"metric":'
        out += orjson.dumps(vec.labels)
        if instant:
            out += f',"value":[{times[0]},"{sample_text(float(vec.values[0]))}"]}}'.encode()
        else:
            idx = np.flatnonzero(vec.present)
            points = _points(times, idx.tolist(), vec.values[idx].tolist())
            out += f',"values":[{points}]}}'.encode()
        if len(out) > max_bytes:
            raise EvalError(
                f"the answer passes {max_bytes / 2**20:g} MiB (CAUSELINE_READ_MAX_ANSWER_MIB): "
                "narrow the selector, aggregate, or raise step"
            )
    out += b"]}}"
    return memoryview(out)
