"""Chunked range queries, conversion and error messages, with a fake client (no network)."""

from __future__ import annotations

import numpy as np
import pytest

from correlator.promsource.chunks import plan_chunks, points
from correlator.promsource.mapping import parse_mapping
from correlator.promsource.reader import PrometheusReader, PromSourceError
from correlator.promsource.source import PrometheusSource
from correlator.selector import parse_selector


@pytest.mark.parametrize(
    ("start", "end", "step", "limit"),
    [(0, 86_400, 1, 11_000), (100, 100, 15, 11_000), (0, 10, 1, 11), (0, 30 * 86_400, 15, 11_000)],
)
def test_chunks_cover_the_window_within_the_limit(start, end, step, limit):
    chunks = plan_chunks(start, end, step, limit)
    assert chunks[0][0] == start and chunks[-1][1] == end
    for (_s, e), (s2, _) in zip(chunks, chunks[1:], strict=False):
        assert s2 == e + step
    assert all(points(s, e, step) <= limit for s, e in chunks)
    assert sum(points(s, e, step) for s, e in chunks) == points(start, end, step)


def test_chunks_reject_bad_input():
    with pytest.raises(ValueError):
        plan_chunks(10, 0, 1)
    with pytest.raises(ValueError):
        plan_chunks(0, 10, 0)


class FakeClient:
    """Answer range queries from a function of time, recording each call."""

    def __init__(self, fail: Exception | None = None):
        self.calls: list[tuple[str, float, float, str]] = []
        self.fail = fail

    def custom_query_range(self, query, start_time, end_time, step):
        if self.fail:
            raise self.fail
        s, e = start_time.timestamp(), end_time.timestamp()
        self.calls.append((query, s, e, step))
        ts = np.arange(s, e + 1e-9, float(step))
        return [
            {
                "metric": {"instance": f"h{i}:9100", "job": "node", "gpu": "0"},
                "values": [[t, str(t * (i + 1))] for t in ts],
            }
            for i in range(2)
        ]


MAPPING = parse_mapping(
    {
        "max_points": 100,
        "metrics": {
            "gpu_memory_used_bytes": {
                "query": "DCGM_FI_DEV_FB_USED",
                "labels": {"host": {"from": "instance", "regex": "(.*):[0-9]+"}, "gpu": "gpu"},
                "scale": 2,
            }
        },
        "passthrough": ["model_ctr"],
    }
)


def test_reader_chunks_and_joins_series():
    client = FakeClient()
    reader = PrometheusReader("http://prom:9090/", MAPPING, client=client)
    found = reader.read(["gpu_memory_used_bytes", "unmapped_metric"], 1000, 1999, 1)
    assert [c[1:3] for c in client.calls] == [(1000, 1099), (1100, 1199)] + [
        (1000 + 100 * k, 1099 + 100 * k) for k in range(2, 10)
    ]
    assert all(points(s, e, 1) <= 100 for _, s, e, _ in client.calls)
    assert [s.labels for s in found] == [{"gpu": "0", "host": "h0"}, {"gpu": "0", "host": "h1"}]
    first = found[0]
    assert first.name == "gpu_memory_used_bytes"
    np.testing.assert_array_equal(first.ts, np.arange(1000, 2000))
    np.testing.assert_array_equal(first.values, 2 * np.arange(1000, 2000))


def test_errors_name_the_url_and_the_query():
    reader = PrometheusReader(
        "http://prom:9090", MAPPING, client=FakeClient(fail=ConnectionError("refused"))
    )
    with pytest.raises(PromSourceError) as info:
        reader.read(["model_ctr"], 0, 60, 15)
    text = str(info.value)
    assert "http://prom:9090" in text and "'model_ctr'" in text and "refused" in text


def test_source_selects_after_mapping():
    source = PrometheusSource(PrometheusReader("http://p", MAPPING, client=FakeClient()), step=10)
    picked = source.select(parse_selector('gpu_memory_used_bytes{host="h1"}'), start=0, end=50)
    assert [s.labels["host"] for s in picked] == ["h1"]
    assert source.metrics == {"gpu_memory_used_bytes", "model_ctr"}
