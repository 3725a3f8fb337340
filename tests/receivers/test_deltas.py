"""Delta increments become running totals in the store: in order, resent and out of order."""

from __future__ import annotations

from sqlalchemy import text

from collector.schema import Batch, SeriesBatch
from correlator.store.ingest import store_batch

T = 1_700_000_000.0


def _delta(points: list[tuple[float, float]]) -> SeriesBatch:
    return SeriesBatch(
        name="requests_total",
        labels={"service": "ranker"},
        timestamps=[T + t for t, _ in points],
        values=[v for _, v in points],
    )


def _stored(engine) -> list[tuple[float, float]]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT ts, value FROM samples ORDER BY ts")).all()
    return [(ts / 1000 - T, value) for ts, value in rows]


def _store(engine, points):
    return store_batch(engine=engine, batch=Batch(series=[]), deltas=[_delta(points)])


def test_deltas_accumulate_once_in_any_order(engine):
    first = _store(engine, [(10, 1.0), (20, 2.0), (30, 3.0)])
    assert (first.samples, first.inserted) == (3, 3)
    assert _stored(engine) == [(10, 1.0), (20, 3.0), (30, 6.0)]
    resent = _store(engine, [(10, 1.0), (20, 2.0), (30, 3.0)])
    assert resent.inserted == 0
    assert _stored(engine) == [(10, 1.0), (20, 3.0), (30, 6.0)]
    # A resent point beside a new one: only the new one adds.
    assert _store(engine, [(30, 3.0), (40, 4.0)]).inserted == 1
    assert _stored(engine)[-1] == (40, 10.0)
    # An export that arrives late raises the totals stored after it.
    assert _store(engine, [(25, 10.0), (45, -2.0)]).inserted == 2
    assert _stored(engine) == [
        (10, 1.0),
        (20, 3.0),
        (25, 13.0),
        (30, 16.0),
        (40, 20.0),
        (45, 18.0),
    ]
    assert _store(engine, [(25, 10.0)]).inserted == 0  # and once only
    assert _stored(engine)[2:4] == [(25, 13.0), (30, 16.0)]


def test_deltas_and_levels_in_one_batch(engine):
    level = SeriesBatch("queue_depth", {"service": "ranker"}, [T + 5], [7.0])
    result = store_batch(
        engine=engine, batch=Batch(series=[level]), deltas=[_delta([(5, 2.0), (6, 2.0)])]
    )
    assert (result.series, result.samples, result.inserted) == (2, 3, 3)
    assert sorted(v for _, v in _stored(engine)) == [2.0, 4.0, 7.0]
