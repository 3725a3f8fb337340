"""The head's runs: fresh samples a row per series and batch, read, compacted and expired."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from collector.schema import Batch, SeriesBatch
from correlator.store.engine import write_transaction
from correlator.store.tsdb import chunks, head, rollups, write
from correlator.store.tsdb.compaction import compact, thaw
from correlator.store.tsdb.ingest import store_batch
from correlator.store.tsdb.read import time_bounds
from correlator.store.tsdb.retention import run_retention
from correlator.store.tsdb.rollups import rebuild_hours
from correlator.store.tsdb.write import HOUR_MS, insert_rows
from tests.helpers import count_rows, insert_samples, read_samples, store_series
from tests.store.tsdb.test_chunks import NOW, _same, _store, _windows

SPECIAL = [-0.0, np.inf, -np.inf, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, np.nan]


@pytest.fixture
def fresh_everywhere(monkeypatch):
    """Take every hour as fresh, so stored history goes as runs as a live agent's would."""
    monkeypatch.setattr(write, "late_cut", lambda now=None: -(2**40))


def _next_hour() -> float:
    """Return the start of the next hour: fresh for the whole test, whatever the clock."""
    return (time.time() // 3600 + 1) * 3600


def _batch(start: float, n: int, values=None, hosts=("a", "b", "c"), step=1.0) -> Batch:
    stamps = [start + step * k for k in range(n)]
    return Batch(
        series=[
            SeriesBatch("gpu_util", {"host": h}, stamps, list(values or np.arange(n) + i))
            for i, h in enumerate(hosts)
        ]
    )


def _read(engine, start: float, end: float) -> dict:
    with engine.connect() as conn:
        ids = conn.exec_driver_sql("SELECT id FROM series ORDER BY id").scalars().all()
    return read_samples(engine, ids, start, end)


def test_fresh_points_are_runs_read_bit_for_bit_and_resends_count_nothing(engine):
    t0 = _next_hour()
    values = [*SPECIAL, *np.linspace(-3, 3, 13)]
    assert store_batch(engine=engine, batch=_batch(t0, 20, values)).inserted == 60
    assert count_rows(engine, "sample_runs") == 3 and count_rows(engine) == 0
    got = _read(engine, t0, t0 + 100)
    for data in got.values():
        np.testing.assert_array_equal(data.ts, t0 + np.arange(20))
        want = np.array(values)
        assert np.array_equal(data.values.view(np.uint64), want.view(np.uint64))  # -0.0, NaN
    assert store_batch(engine=engine, batch=_batch(t0, 20, values)).inserted == 0

    # Ten resent and ten new: only the new go in, and the stored values stay.
    later = _batch(t0 + 10, 20, [100.0] * 20)
    assert store_batch(engine=engine, batch=later).inserted == 30
    for data in _read(engine, t0, t0 + 100).values():
        np.testing.assert_array_equal(data.ts, t0 + np.arange(30))
        assert np.all(data.values[20:] == 100.0) and data.values[9] != 100.0


def test_few_points_go_keyed_and_a_point_a_run_holds_counts_nothing(engine):
    t0 = _next_hour()
    store_batch(engine=engine, batch=_batch(t0, 10, step=10.0))
    runs_before = count_rows(engine, "sample_runs")
    one = _batch(t0 + 20, 1, [7.0])  # a stored time: a run holds it
    assert store_batch(engine=engine, batch=one).inserted == 0
    between = _batch(t0 + 25, 1, [7.0])  # a new time inside the runs' span
    assert store_batch(engine=engine, batch=between).inserted == 3
    assert count_rows(engine) == 3 and count_rows(engine, "sample_runs") == runs_before
    # Points before the runs' last ones go keyed too, less those the runs hold.
    back = _batch(t0 + 5, 6, [9.0] * 6, step=10.0)  # 5, 15, 25 (stored), ..., 55
    assert store_batch(engine=engine, batch=back).inserted == 15
    for data in _read(engine, t0, t0 + 1000).values():
        assert len(data.ts) == 16 and np.all(np.diff(data.ts) > 0)
        assert data.values[np.searchsorted(data.ts, t0 + 25)] == 7.0


def test_a_batch_s_repeated_time_keeps_its_first_value(engine):
    t0 = _next_hour()
    batch = Batch(
        series=[SeriesBatch("q", {}, [t0, t0 + 1, t0 + 1, t0 + 2, t0 + 3], [1, 2, 3, 4, 5])]
    )
    assert store_batch(engine=engine, batch=batch).inserted == 4
    (data,) = _read(engine, t0, t0 + 10).values()
    np.testing.assert_array_equal(data.values, [1.0, 2.0, 4.0, 5.0])


def test_a_long_batch_splits_at_hour_ends_and_run_max(engine):
    t0 = _next_hour() + 3600 - 30  # 30 s before an hour ends
    assert store_batch(engine=engine, batch=_batch(t0, 150, hosts=("a",))).inserted == 150
    with engine.connect() as conn:
        sizes = conn.exec_driver_sql(
            "SELECT hour, n_samples FROM sample_runs ORDER BY hour, first_ts"
        ).all()
    hour = int(t0 * 1000) // HOUR_MS
    assert sizes == [(hour, 30), (hour + 1, head.RUN_MAX), (hour + 1, head.RUN_MAX), (hour + 1, 8)]
    (data,) = _read(engine, t0, t0 + 1000).values()
    np.testing.assert_array_equal(data.ts, t0 + np.arange(150))


def test_concurrent_overlapping_writers_store_each_time_once(engine):
    t0 = _next_hour()
    hosts = tuple(f"h{i}" for i in range(40))
    store_batch(engine=engine, batch=_batch(t0, 1, hosts=hosts))  # the series exist
    counts: list[int] = []
    errors: list[BaseException] = []

    def send(offset: int) -> None:
        try:
            for k in range(8):
                batch = _batch(t0 + offset + 5 * k, 20, hosts=hosts)
                counts.append(store_batch(engine=engine, batch=batch).inserted)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=send, args=(o,)) for o in (0, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for data in _read(engine, t0, t0 + 1000).values():
        assert np.all(np.diff(data.ts) > 0)  # no time twice
        assert len(data.ts) == 3 + 5 * 7 + 20  # times 0..57, every one
    assert 1 * len(hosts) + sum(counts) == len(hosts) * 58


def test_a_store_written_as_runs_compacts_bit_for_bit(engine, fresh_everywhere):
    ids, t0 = _store(engine)
    assert count_rows(engine) == 0 and count_rows(engine, "sample_runs") > 0
    steps = (None, 15, 60, 3600)
    before = {(w, s): read_samples(engine, ids, *w, step=s) for w in _windows(t0) for s in steps}
    whole = before[(_windows(t0)[0], None)]
    special = whole[ids[0]].values[200 : 200 + len(SPECIAL)]
    assert np.array_equal(special[:-1].view(np.uint64), np.array(SPECIAL[:-1]).view(np.uint64))

    report = compact(engine=engine, now=NOW, head_seconds=3600)

    assert len(report.hours) >= 4 and report.samples > 0
    with engine.connect() as conn:
        assert chunks.sample_count(conn=conn) == sum(len(d.ts) for d in whole.values())
        assert head.first_hour(conn=conn) * HOUR_MS >= (NOW - 2 * 3600) * 1000  # the head
    for (window, step), got in before.items():
        _same(read_samples(engine, ids, *window, step=step), got)
    assert compact(engine=engine, now=NOW, head_seconds=3600).samples == 0


def test_rollups_of_runs_equal_rollups_of_keyed_rows(engine, monkeypatch):
    ids = store_series(engine, 4)
    rng = np.random.default_rng(5)
    ts = np.arange(NOW - 3 * 3600, NOW - 3600, 7.5)
    values = [rng.normal(0, 1, len(ts)).round(3) for _ in range(2)]
    values[1][::13] = np.nan
    insert_samples(engine, ids[:2], [ts] * 2, values)  # late history: keyed rows
    monkeypatch.setattr(write, "late_cut", lambda now=None: -(2**40))
    insert_samples(engine, ids[2:], [ts] * 2, values)  # the same, as runs
    assert count_rows(engine) == 2 * len(ts) and count_rows(engine, "sample_runs") > 0
    hours = sorted({int(t * 1000) // HOUR_MS for t in ts})
    with write_transaction(engine) as conn:
        rebuild_hours(conn=conn, hours=hours)
        rows = conn.exec_driver_sql(
            'SELECT series_id, hour, ts, "min", "max", "sum", "count" FROM samples_1m '
            "ORDER BY series_id, ts"
        ).all()
    by_series = {sid: [r[1:] for r in rows if r[0] == sid] for sid in ids}
    assert by_series[ids[0]] == by_series[ids[2]] and by_series[ids[1]] == by_series[ids[3]]
    assert len(by_series[ids[0]]) == len(np.unique(ts // 60))


@pytest.mark.parametrize("piece", [1, 200])
def test_a_pass_of_the_rollup_job_takes_run_hours(engine, fresh_everywhere, monkeypatch, piece):
    monkeypatch.setattr(rollups, "REBUILD_SERIES", piece)
    ids, t0 = _store(engine, hours=3.0)
    report = rollups.roll_up(engine=engine, now=NOW, lag_seconds=300)
    assert len(report.hours) >= 2 and report.minutes > 0
    with engine.connect() as conn:
        counted = conn.exec_driver_sql('SELECT SUM("count") FROM samples_1m').scalar()
    hour = report.hours[-1] * 3600.0  # the oldest rolled hour, whole
    got = read_samples(engine, ids, hour, hour + 3599.999)
    assert counted >= sum(int(np.sum(~np.isnan(d.values))) for d in got.values()) > 0


def test_retention_drops_runs_past_the_cutoff_and_counts_them(engine, fresh_everywhere):
    ids, t0 = _store(engine, hours=30.0)
    day = int(NOW // 86400) * 24
    with engine.connect() as conn:
        gone = head.sample_count(conn=conn, to_hour=day)
        held = head.sample_count(conn=conn)
    assert 0 < gone < held
    report = run_retention(engine=engine, raw_days=0, rollup_days=90, now=NOW)
    assert report.deleted_raw_rows == gone and report.rolled_up_minutes > 0
    with engine.connect() as conn:
        assert head.sample_count(conn=conn) == held - gone
        assert head.first_hour(conn=conn) >= day
    today = read_samples(engine, ids, day * 3600, NOW)
    assert all(d.ts.min() >= day * 3600 for d in today.values())


def test_late_points_for_an_hour_of_runs_count_only_new_times(engine, monkeypatch):
    ids = store_series(engine, 1)
    ts = [NOW - 7200 + 10 * k for k in range(30)]
    monkeypatch.setattr(write, "late_cut", lambda now=None: -(2**40))
    assert insert_samples(engine, ids, [ts], [[1.0] * 30]) == 30
    monkeypatch.undo()  # the hour is late again: these go keyed, checked against the runs
    assert insert_samples(engine, ids, [ts[:3] + [ts[2] + 5]], [[2.0] * 4]) == 1
    (data,) = read_samples(engine, ids, ts[0], ts[-1]).values()
    assert len(data.ts) == 31 and data.values[0] == 1.0
    assert count_rows(engine) == 1


def test_thaw_moves_runs_back_to_keyed_rows(engine, fresh_everywhere):
    ids, t0 = _store(engine, hours=3.0)
    before = read_samples(engine, ids, t0 - 1, NOW + 1)
    first = int(t0 * 1000) // HOUR_MS + 1
    with write_transaction(engine) as conn:
        moved = thaw(
            conn=conn,
            series_id=ids[2],
            from_hour=first,
            insert=lambda rows: insert_rows(conn=conn, rows=rows),
        )
        left = head.read(conn=conn, series_ids=[ids[2]], first_hour=first, last_hour=10**9)
    assert moved > 0 and left == [] and count_rows(engine) == moved
    after = read_samples(engine, ids, t0 - 1, NOW + 1)
    for sid, data in before.items():  # equal: keyed rows on SQLite keep -0.0 as 0.0
        np.testing.assert_array_equal(after[sid].ts, data.ts)
        np.testing.assert_array_equal(after[sid].values, data.values)


def test_time_bounds_not_after_a_time_inside_runs(engine):
    t0 = _next_hour()
    store_batch(engine=engine, batch=_batch(t0, 20, hosts=("a",)))
    store_batch(engine=engine, batch=_batch(t0 + 0.5, 20, hosts=("b",)))
    with engine.connect() as conn:
        assert time_bounds(conn=conn) == (t0, t0 + 19.5)
        assert time_bounds(conn=conn, not_after=t0 + 7.7) == (t0, t0 + 7.5)
        assert time_bounds(conn=conn, not_after=t0 + 100) == (t0, t0 + 19.5)


def test_postgres_keyed_writers_share_the_head_and_run_writers_wait(engine):
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer: the head lock is PostgreSQL's")
    t0 = _next_hour()
    hosts = ("a", "b", "c", "d", "e")  # one point each: more rows than a run needs, no run
    store_batch(engine=engine, batch=_batch(t0, 1, hosts=hosts))  # the series exist
    done: dict[str, threading.Event] = {"keyed": threading.Event(), "runs": threading.Event()}

    def send(label: str, batch: Batch) -> None:
        store_batch(engine=engine, batch=batch)
        done[label].set()

    with write_transaction(engine) as conn:  # an open batch of one point a series
        ids = conn.exec_driver_sql("SELECT id FROM series").scalars().all()
        cols = write.sample_columns(ids, [[t0 + 1]] * 5, [[1.0]] * 5)
        assert write.insert_columns(conn=conn, cols=cols) == 5
        keyed = threading.Thread(target=send, args=("keyed", _batch(t0 + 2, 1, hosts=hosts)))
        keyed.start()
        assert done["keyed"].wait(30)  # shared with this one: it does not wait
        runs_writer = threading.Thread(target=send, args=("runs", _batch(t0 + 3, 20, hosts=hosts)))
        runs_writer.start()
        assert not done["runs"].wait(1.0)  # a run writer waits for this commit
    runs_writer.join(30)
    keyed.join(30)
    assert done["runs"].is_set()
    assert sum(len(d.ts) for d in _read(engine, t0, t0 + 100).values()) == 5 * 23


def test_a_batch_of_history_and_fresh_points_stores_each_its_way(engine):
    t0 = _next_hour()
    old = [t0 - 86400 + 10 * k for k in range(10)]  # yesterday: late, keyed
    new = [t0 + 10 * k for k in range(10)]  # fresh: a run
    batch = Batch(series=[SeriesBatch("q", {"h": "a"}, old + new, list(range(20)))])
    assert store_batch(engine=engine, batch=batch).inserted == 20
    assert count_rows(engine) == 10 and count_rows(engine, "sample_runs") == 1
    assert store_batch(engine=engine, batch=batch).inserted == 0
    (data,) = _read(engine, old[0], new[-1]).values()
    np.testing.assert_array_equal(data.ts, old + new)
    np.testing.assert_array_equal(data.values, np.arange(20.0))


def test_copy_data_is_the_binary_copy_of_each_run_packed_one_by_one():
    """Bit for bit, runs of one length together and in order (COPY takes rows in any order)."""
    import struct

    rng = np.random.default_rng(2)
    lengths = np.array([4, 56, 56, 9, 30, 1])
    n = int(lengths.sum())
    hour = np.repeat(rng.integers(0, 500_000, len(lengths)), lengths)
    series_id = np.repeat(rng.integers(1, 2**31 - 1, len(lengths)), lengths)
    ts = np.sort(rng.integers(0, 2**50, n))
    values = rng.normal(0, 1e300, n)
    values[[3, 70]] = [np.nan, -0.0]
    starts = np.cumsum(lengths) - lengths
    taken = np.array([0, 1, 3, 5])  # some groups only: the rest go keyed
    want = [b"PGCOPY\n\xff\r\n\x00" + bytes(8)]
    by_length = sorted(zip(lengths[taken].tolist(), starts[taken].tolist(), strict=True))
    for c, a in by_length:  # rows in any order: copy_data writes runs of a length together
        tb, vb = ts[a : a + c].astype("<i8").tobytes(), values[a : a + c].astype("<f8").tobytes()
        want.append(
            struct.pack(
                ">hiiiiiqiqiii",
                7,
                4,
                hour[a],
                4,
                series_id[a],
                8,
                ts[a],
                8,
                ts[a + c - 1],
                4,
                c,
                len(tb),
            )
            + tb
            + struct.pack(">i", len(vb))
            + vb
        )
    want.append(b"\xff\xff")
    got = head.copy_data(hour, series_id, ts, values, starts[taken], lengths[taken])
    assert got == b"".join(want)


def test_groups_longer_than_a_run_split_in_order():
    first, counts = head.pieces(np.array([0, 200]), np.array([130, 5]))
    assert first.tolist() == [0, 56, 112, 200] and counts.tolist() == [56, 56, 18, 5]


def test_points_around_a_keyed_one_go_keyed_and_skip_it(engine):
    t0 = _next_hour()
    assert store_batch(engine=engine, batch=_batch(t0 + 10, 1, [5.0])).inserted == 3
    assert store_batch(engine=engine, batch=_batch(t0, 20)).inserted == 57
    assert count_rows(engine, "sample_runs") == 0 and count_rows(engine) == 60
    for data in _read(engine, t0, t0 + 100).values():
        np.testing.assert_array_equal(data.ts, t0 + np.arange(20))
        assert data.values[10] == 5.0
