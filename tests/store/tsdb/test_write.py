"""The columnar ingest path: exact values, NULLs, duplicates and retries on both engines."""

from __future__ import annotations

import json
import math
import struct
import threading

import numpy as np
import pytest
from sqlalchemy import text

from collector.schema import Batch, SeriesBatch
from correlator.store.engine import write_transaction
from correlator.store.tsdb import series, write
from correlator.store.tsdb.ingest import SeriesCache, store_batch
from correlator.store.tsdb.series import ensure_series
from correlator.store.tsdb.write import columns_of, insert_rows, sample_columns
from tests.helpers import count_rows, insert_samples, store_series

T0 = 1_700_000_000.0
# Edge values: subnormal, extremes, negative zero, and ones whose repr is long.
EDGES = [5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308, 0.1, 1 / 3, 2.0**-1074]


def _bits(value: float) -> bytes:
    return struct.pack(">d", value)


def _stored(engine, sid: int) -> list[tuple[int, float | None]]:
    with engine.connect() as conn:
        return conn.execute(
            text("SELECT ts, value FROM samples WHERE series_id = :s ORDER BY ts"), {"s": sid}
        ).all()


def test_values_round_trip_bit_exactly(engine):
    (sid,) = store_series(engine, 1)
    rng = np.random.default_rng(7)
    values = [*EDGES, *(rng.standard_normal(200) * 10.0 ** rng.integers(-300, 300, 200)).tolist()]
    values += [math.inf, -math.inf, math.nan, 3.5, math.nan]
    ts = [T0 + 0.001 * k for k in range(len(values))]  # millisecond steps
    assert insert_samples(engine, [sid], [ts], [values]) == len(values)
    stored = _stored(engine, sid)
    assert [t for t, _ in stored] == [round(t * 1000) for t in ts]
    for (_, got), want in zip(stored, values, strict=True):
        if math.isnan(want):
            assert got is None  # NaN is kept as NULL
        else:
            assert _bits(got) == _bits(want)


def test_negative_zero_where_the_engine_keeps_it(engine):
    (sid,) = store_series(engine, 1)
    assert insert_samples(engine, [sid], [[T0]], [[-0.0]]) == 1
    ((_, got),) = _stored(engine, sid)
    assert got == 0.0
    if engine.dialect.name == "postgresql":  # SQLite writes an integral REAL as an integer
        assert math.copysign(1.0, got) == -1.0


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 1023, 1700, 9000])
@pytest.mark.parametrize("per_statement", [64, None])
def test_every_statement_size_counts_and_stores_each_row(engine, n, per_statement, monkeypatch):
    if per_statement and engine.dialect.name != "sqlite":
        pytest.skip("the statement size is SQLite's; PostgreSQL copies the batch whole")
    if per_statement:  # full statements and power-of-two rests both run
        monkeypatch.setattr(write, "_SQLITE_ROWS", per_statement)
    (sid,) = store_series(engine, 1)
    ts = [T0 + k for k in range(n)]
    assert insert_samples(engine, [sid], [ts[::3]], [[1.0] * len(ts[::3])]) == len(ts[::3])
    values = [float(k) for k in range(n)]
    values[n // 2] = math.nan
    assert insert_samples(engine, [sid], [ts], [values]) == n - len(ts[::3])
    assert count_rows(engine) == n
    assert insert_samples(engine, [sid], [ts], [values]) == 0  # a retry stores nothing twice


def test_nulls_anywhere_in_a_batch(engine):
    ids = store_series(engine, 3)
    values = [[math.nan, 1.0, math.nan], [2.0, math.nan, 3.0], [math.nan, math.nan, math.nan]]
    ts = [[T0, T0 + 1, T0 + 2]] * 3
    assert insert_samples(engine, ids, ts, values) == 9
    for sid, want in zip(ids, values, strict=True):
        got = [v for _, v in _stored(engine, sid)]
        assert got == [None if math.isnan(v) else v for v in want]


def test_duplicates_within_a_batch_store_once(engine):
    (sid,) = store_series(engine, 1)
    ts = [T0, T0 + 1, T0, T0 + 2, T0 + 1]
    assert insert_samples(engine, [sid], [ts], [[5.0] * 5]) == 3
    assert count_rows(engine) == 3
    assert insert_samples(engine, [sid], [ts + [T0 + 3]], [[5.0] * 6]) == 1


def test_rows_and_columns_agree(engine):
    ids = store_series(engine, 2)
    ts = [[T0 + 2, T0, T0 + 1], [T0 + 3600, T0]]
    values = [[1.0, math.nan, 2.0], [math.inf, -1.5]]
    cols = sample_columns(ids, ts, values)
    keys = list(zip(cols.hour.tolist(), cols.series_id.tolist(), cols.ts.tolist(), strict=True))
    assert keys == sorted(keys)
    values_out = [None if math.isnan(v) else v for v in cols.value.tolist()]
    rows = [(*k, v) for k, v in zip(keys, values_out, strict=True)]
    assert [r[3] for r in rows if r[1] == ids[0]] == [None, 2.0, 1.0]
    back = columns_of(rows)
    for got, want in zip(
        (back.hour, back.series_id, back.ts, back.value),
        (cols.hour, cols.series_id, cols.ts, cols.value),
        strict=True,
    ):
        assert np.array_equal(got, want, equal_nan=True)
    with write_transaction(engine) as conn:
        assert insert_rows(conn=conn, rows=rows) == 5
        assert insert_rows(conn=conn, rows=[]) == 0
    assert [v for _, v in _stored(engine, ids[1])] == [-1.5, math.inf]


def test_store_batch_retry_reports_inserted(engine):
    cache = SeriesCache()
    batch = Batch(
        series=[
            SeriesBatch("m", {"i": str(i)}, [T0 + k for k in range(30)], [k / 7 for k in range(30)])
            for i in range(40)
        ]
    )
    first = store_batch(engine=engine, batch=batch, cache=cache)
    assert (first.series, first.samples, first.inserted) == (40, 1200, 1200)
    again = store_batch(engine=engine, batch=batch, cache=SeriesCache())
    assert (again.samples, again.inserted) == (1200, 0)
    assert count_rows(engine) == 1200


def test_labels_in_another_order_are_the_same_series_cached_or_not(engine):
    cache = SeriesCache()

    def send(labels: dict[str, str], at: float, cache: SeriesCache) -> int:
        batch = Batch(series=[SeriesBatch("m", labels, [at], [at - T0])])
        return store_batch(engine=engine, batch=batch, cache=cache).inserted

    assert send({"a": "1", "b": "2"}, T0, cache) == 1
    assert send({"b": "2", "a": "1"}, T0, cache) == 0  # the same sample, labels reordered
    assert send({"b": "2", "a": "1"}, T0 + 1, cache) == 1
    assert send({"a": "1", "b": "2"}, T0 + 2, SeriesCache()) == 1
    # Label text that would read the same run together never makes two series one.
    assert send({"a": "1b2"}, T0, cache) == 1
    assert send({"a": "1", "b": "2", "c": ""}, T0, cache) == 1
    with engine.connect() as conn:
        ids = conn.execute(text("SELECT id FROM series WHERE name = 'm' ORDER BY id")).scalars()
        counts = [len(_stored(engine, sid)) for sid in ids.all()]
    assert counts == [3, 1, 1]


def test_concurrent_batches_on_one_engine(engine):
    cache = SeriesCache()
    done: list[int] = []

    def send(part: int) -> None:
        series = [
            SeriesBatch("m", {"i": str(i)}, [T0 + k for k in range(50)], [float(part)] * 50)
            for i in range(part * 10, part * 10 + 20)  # halves overlap the next writer's
        ]
        done.append(store_batch(engine=engine, batch=Batch(series=series), cache=cache).inserted)

    threads = [threading.Thread(target=send, args=(p,)) for p in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(done) == count_rows(engine) == 50 * 50


@pytest.mark.parametrize("per_statement", [None, 2])
def test_ensure_series_stores_labels_as_json_text_in_order(engine, per_statement, monkeypatch):
    if per_statement:  # SQLite: several statements, the last one short
        monkeypatch.setattr(series, "CHUNK", per_statement)
    items = {f"k{i}": (f"m_{i}", {"z": "1", "a": f"v{i}"}) for i in range(5)}
    items["h"] = ("lat_bucket", {"le": "+Inf", "svc": "a"})
    with write_transaction(engine) as conn:
        ids = ensure_series(conn=conn, items=items)
    more = {"k9": ("m_9", {}), "k1": items["k1"], "k8": ("m_8", {"a": "x"})}
    with write_transaction(engine) as conn:
        assert ensure_series(conn=conn, items=items) == ids
        again = ensure_series(conn=conn, items=more)
    assert again["k1"] == ids["k1"] and again["k9"] > max(ids.values())
    assert again["k9"] < again["k8"]  # in the items' order (PostgreSQL may skip ids)
    assert [ids[k] for k in items] == sorted(ids.values())  # created in the items' order
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT key, name, labels, histogram_id, le FROM series ORDER BY id")
        ).all()
    by_key = {r[0]: r for r in rows}
    for key, (name, labels) in items.items():
        _, got_name, got_labels, hist, le = by_key[key]
        if isinstance(got_labels, str):
            assert got_labels == json.dumps(labels)
        else:
            assert list(got_labels.items()) == list(labels.items())
        assert got_name == name
        assert (hist is not None, le) == ((True, math.inf) if key == "h" else (False, None))
