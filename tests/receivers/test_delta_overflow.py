"""A delta that would take a stored running total past float64's range is refused, naming it."""

from __future__ import annotations

import json
import math

import pytest
from sqlalchemy import text

from collector.schema import Batch
from correlator.store.tsdb.deltas import DeltaOverflow
from correlator.store.tsdb.ingest import store_batch
from tests.helpers import count_rows
from tests.receivers.test_deltas import T, _delta, _stored
from tests.receivers.test_otlp_api import JSON, NS, export

BIG = 1e308


def _values(engine) -> list[float]:
    with engine.connect() as conn:
        return [r[0] for r in conn.execute(text("SELECT value FROM samples ORDER BY ts"))]


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["up", "down"])
def test_a_total_past_the_range_is_refused_and_nothing_stored(engine, sign):
    with pytest.raises(DeltaOverflow) as caught:
        store_batch(
            engine=engine,
            batch=Batch(series=[]),
            deltas=[_delta([(10, 1.0), (20, sign * BIG), (30, sign * BIG)])],
        )
    assert caught.value.index == 0 and caught.value.ts == T + 30
    assert "past float64's range" in str(caught.value)
    assert count_rows(engine) == 0


def test_a_stored_total_is_kept_when_the_next_delta_would_overflow(engine):
    store_batch(engine=engine, batch=Batch(series=[]), deltas=[_delta([(10, BIG)])])
    with pytest.raises(DeltaOverflow):
        store_batch(engine=engine, batch=Batch(series=[]), deltas=[_delta([(20, BIG)])])
    assert _stored(engine) == [(10, BIG)]


def test_a_late_delta_that_would_raise_a_later_total_past_the_range_is_refused(engine):
    store_batch(engine=engine, batch=Batch(series=[]), deltas=[_delta([(10, 1.0), (30, BIG)])])
    with pytest.raises(DeltaOverflow) as caught:
        store_batch(engine=engine, batch=Batch(series=[]), deltas=[_delta([(20, BIG)])])
    assert caught.value.ts == T + 20
    assert _stored(engine) == [(10, 1.0), (30, BIG + 1.0)]
    assert all(math.isfinite(v) for v in _values(engine))


def _sum_export(value: float, seconds: int) -> dict:
    point = {"timeUnixNano": str(NS + seconds * 10**9), "asDouble": value}
    metric = {
        "name": "bytes.moved",
        "sum": {"aggregationTemporality": 1, "isMonotonic": False, "dataPoints": [point]},
    }
    return export(metric)


def test_otlp_answers_400_naming_the_metric_and_the_point(client):
    ok = client.post("/v1/metrics", content=json.dumps(_sum_export(BIG, 0)), headers=JSON)
    assert ok.status_code == 200, ok.text
    resp = client.post("/v1/metrics", content=json.dumps(_sum_export(BIG, 10)), headers=JSON)
    assert resp.status_code == 400, resp.text
    message = resp.json()["message"]
    assert message.startswith("resourceMetrics[0].scopeMetrics[0].metrics[0].sum: "), message
    assert "bytes_moved" in message and str(NS + 10 * 10**9) in message, message
    assert "past float64's range" in message and "nothing stored" in message, message
    assert _values(client.engine) == [BIG]
