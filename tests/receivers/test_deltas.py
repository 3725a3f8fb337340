"""Delta increments become running totals in the store: in order, resent and out of order."""

from __future__ import annotations

from sqlalchemy import text

from collector.schema import Batch, SeriesBatch
from correlator.store.tsdb.ingest import store_batch

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


def _all(engine) -> list[tuple[float, float]]:
    """Return every stored (t, value), raw or chunked, as a read sees them."""
    from correlator.store.tsdb.read import read_range

    with engine.connect() as conn:
        data = read_range(conn=conn, series_ids=[1], start=T - 86_400, end=T + 86_400)
    return [(t - T, v) for t, v in zip(data[1].ts.tolist(), data[1].values.tolist(), strict=True)]


def test_deltas_into_compacted_hours_count_once_and_build_on_chunked_totals(engine):
    from correlator.store.tsdb.compaction import compact

    _store(engine, [(10, 1.0), (20, 2.0), (4000, 3.0)])  # two hours, an hour apart
    assert compact(engine=engine, head_seconds=3600).samples == 3
    assert _stored(engine) == []  # all in chunks now
    assert _all(engine) == [(10, 1.0), (20, 3.0), (4000, 6.0)]
    # Resent: nothing changes. New after the chunked total: builds on it.
    assert _store(engine, [(10, 1.0), (4000, 3.0)]).inserted == 0
    assert _store(engine, [(8000, 4.0)]).inserted == 1
    assert _all(engine)[-1] == (8000, 10.0)
    # Late, inside a chunked hour: the totals after it, chunked ones too, go up once.
    assert _store(engine, [(15, 5.0)]).inserted == 1
    assert _all(engine) == [(10, 1.0), (15, 6.0), (20, 8.0), (4000, 11.0), (8000, 15.0)]
    assert _store(engine, [(15, 5.0)]).inserted == 0
    compact(engine=engine, head_seconds=3600)
    assert _all(engine) == [(10, 1.0), (15, 6.0), (20, 8.0), (4000, 11.0), (8000, 15.0)]
