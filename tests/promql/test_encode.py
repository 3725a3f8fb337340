"""The query answer's text: Prometheus' number and time formats, one series at a time, bounded."""

from __future__ import annotations

import math

import numpy as np
import orjson
import pytest

from correlator.promql.encode import encode, sample_text, time_text
from correlator.promql.evaluate import EvalError, Vec


def _reference(value: float) -> str:
    """Prometheus' FormatFloat(v, 'f', -1, 64), as numpy's Dragon4 writes it."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return np.format_float_positional(value, trim="-")


EDGES = [
    0.0, -0.0, 1.0, -3.0, 0.1, 1e-4, 9.999999999999999e-5, 1e16, 9999999999999998.0, 1e20,
    -1e-7, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 123456789.125, 2**53 + 2.0,
    math.nan, math.inf, -math.inf,
]  # fmt: skip


def test_sample_text_writes_what_prometheus_writes():
    rng = np.random.default_rng(7)
    spread = rng.standard_normal(20_000) * 10.0 ** rng.integers(-30, 30, 20_000)
    for value in [*EDGES, *spread.tolist(), *np.round(spread, 3).tolist()]:
        assert sample_text(value) == _reference(value), repr(value)


@pytest.mark.parametrize(
    ("ms", "text"),
    [(0, "0"), (1_500, "1.5"), (1_700_000_000_001, "1700000000.001"), (-1_500, "-1.5"),
     (-2_000, "-2"), (9_200_000_000_000_000_010, "9200000000000000.01")],
)  # fmt: skip
def test_time_text_is_exact_seconds(ms, text):
    assert time_text(ms) == text


def _vec(labels, values, present=None) -> Vec:
    values = np.asarray(values, dtype=float)
    mask = np.ones(values.size, bool) if present is None else np.asarray(present)
    return Vec(labels, values, mask)


def test_the_document_is_the_one_a_json_encoder_writes_from_lists():
    steps = np.array([1_000, 16_000, 31_500], dtype=np.int64)
    value = [
        _vec({"__name__": "x", "a": 'q"\\é'}, [1.0, math.nan, 2.5], [True, True, False]),
        _vec({}, [math.inf, 1e-7, 0.0]),
    ]
    got = orjson.loads(encode(value, steps, instant=False, tick=lambda: None, max_bytes=10**6))
    inf_small_zero = [[1, "+Inf"], [16, "0.0000001"], [31.5, "0"]]
    assert got == {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {"metric": {"__name__": "x", "a": 'q"\\é'}, "values": [[1, "1"], [16, "NaN"]]},
                {"metric": {}, "values": inf_small_zero},
            ],
        },
    }  # fmt: skip
    instant = encode(value[:1], steps[:1], instant=True, tick=lambda: None, max_bytes=10**6)
    assert orjson.loads(instant)["data"]["result"] == [
        {"metric": {"__name__": "x", "a": 'q"\\é'}, "value": [1, "1"]}
    ]
    scalar = encode(
        np.array([2.0, 3.0, 4.5]), steps, instant=False, tick=lambda: None, max_bytes=99
    )
    assert orjson.loads(scalar)["data"]["result"][0]["values"] == [
        [1, "2"],
        [16, "3"],
        [31.5, "4.5"],
    ]


def test_the_answer_stops_at_its_byte_bound_and_ticks_between_series():
    steps = np.arange(0, 100_000, 1_000, dtype=np.int64)
    value = [_vec({"i": str(i)}, np.arange(100.0)) for i in range(50)]
    ticks = []
    whole = encode(value, steps, instant=False, tick=lambda: ticks.append(1), max_bytes=10**7)
    assert len(ticks) == 50
    with pytest.raises(EvalError, match="CAUSELINE_READ_MAX_ANSWER_MIB"):
        encode(value, steps, instant=False, tick=lambda: None, max_bytes=len(whole) // 2)

    def stop():
        if len(ticks) > 52:
            raise TimeoutError

    with pytest.raises(TimeoutError):
        encode(value, steps, instant=False, tick=lambda: (ticks.append(1), stop()), max_bytes=10**7)
