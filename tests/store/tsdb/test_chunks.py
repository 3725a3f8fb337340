"""Compressed chunks: reads, rollups, late samples and retention are the same as on raw."""

from __future__ import annotations

import json
import tracemalloc
from unittest.mock import ANY

import numpy as np
import pytest
from sqlalchemy import event

from collector.schema import MAX_TIMESTAMP
from correlator.store.engine import write_transaction
from correlator.store.tsdb import chunks, rollups
from correlator.store.tsdb.compaction import compact, thaw
from correlator.store.tsdb.read import time_bounds
from correlator.store.tsdb.retention import run_retention
from correlator.store.tsdb.rollups import rebuild_hours
from correlator.store.tsdb.write import HOUR_MS, insert_rows
from tests.conftest import scenarios_dir
from tests.helpers import count_rows, insert_samples, read_samples, store_series

NOW = 1_764_633_600.0 + 13 * 3600.0 + 1234.5  # 2025-12-02 13:20:34.5 UTC
SPECIAL = [-0.0, np.inf, -np.inf, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, np.nan]


def _store(engine, hours: float = 6.0, seed: int = 3):
    """Store 15 s samples (ms jitter, NaN, special floats) of four series up to NOW."""
    rng = np.random.default_rng(seed)
    ids = store_series(engine, 4)
    base = np.arange(NOW - hours * 3600, NOW, 15.0)
    ts, vals = [], []
    for k in range(len(ids)):
        t = base + rng.integers(0, 14_000, len(base)) / 1000.0
        v = rng.normal(50, 10, len(base)).round(1 if k == 3 else 6)
        v[rng.random(len(base)) < 0.05] = np.nan
        v[100:110] = np.nan
        v[200 : 200 + len(SPECIAL)] = SPECIAL
        ts.append(t.tolist())
        vals.append(v.tolist())
    insert_samples(engine, ids, ts, vals)
    return ids, NOW - hours * 3600


def _same(a, b) -> None:
    """Assert two reads hold the same series, timestamps and value bits (NaN as NaN)."""
    assert a.keys() == b.keys()
    for sid in a:
        np.testing.assert_array_equal(a[sid].ts, b[sid].ts)
        va, vb = a[sid].values, b[sid].values
        assert np.array_equal(np.isnan(va), np.isnan(vb))
        ok = ~np.isnan(va)
        assert np.array_equal(va[ok].view(np.uint64), vb[ok].view(np.uint64)), sid


def _buckets(data, step: float) -> dict:
    """Return (series, bucket) -> (lowest, highest) of a stepped read."""
    out = {}
    for sid, d in data.items():
        ms = np.rint(d.ts * 1000).astype(np.int64)
        assert len(np.unique(ms)) == len(ms)  # timestamps stay unique
        bucket = ms // round(step * 1000)
        for b in np.unique(bucket):
            v = d.values[bucket == b]
            out[(sid, int(b))] = (float(v.min()), float(v.max()), int(len(v)))
    return out


def _windows(t0: float) -> list[tuple[float, float]]:
    return [
        (t0 - 100, NOW + 10),
        (t0 + 3600 - 30.5, t0 + 3600 + 30.5),  # around an hour's end
        (t0 + 1234.567, t0 + 9876.5),
        (NOW - 900, NOW),  # the head only
    ]


def test_reads_after_compaction_are_bit_for_bit_the_reads_before(engine):
    ids, t0 = _store(engine)
    steps = (None, 15, 30, 60, 300, 3600)
    before = {(w, s): read_samples(engine, ids, *w, step=s) for w in _windows(t0) for s in steps}
    raw_rows = count_rows(engine, "samples")

    report = compact(engine=engine, now=NOW, head_seconds=3600)

    assert report.hours == sorted(report.hours) and len(report.hours) >= 4
    assert report.samples == raw_rows - count_rows(engine, "samples") > 0.6 * raw_rows
    with engine.connect() as conn:
        assert chunks.sample_count(conn=conn) == report.samples
        newest = conn.exec_driver_sql("SELECT MIN(hour) FROM samples").scalar()
    assert newest * HOUR_MS >= (NOW - 2 * 3600) * 1000  # the head stays raw
    for (window, step), got in before.items():
        after = read_samples(engine, ids, *window, step=step)
        _same(after, got)  # stepped too: the first of equal extremes on either side
    # Infinities, the smallest subnormal and NaN (stored NULL) come back exactly, and -0.0
    # too where the raw head kept it: SQLite stores a whole REAL as an integer, so 0.0.
    whole = read_samples(engine, ids, t0 - 1, NOW + 1)
    special = whole[ids[0]].values[200 : 200 + len(SPECIAL)]
    expected = np.array(SPECIAL)
    if engine.dialect.name == "sqlite":
        expected[0] = 0.0
    assert np.array_equal(special[:-1].view(np.uint64), expected[:-1].view(np.uint64))
    assert np.isnan(special[-1])


def test_stepped_reads_of_flat_and_tied_series_are_the_same_after_compaction(engine):
    """A flat bucket gives one point, and tied extremes the first of them, on either side."""
    ids = store_series(engine, 3)
    t0 = NOW - 4 * 3600
    ts = np.arange(t0, NOW, 15.0)
    steady = np.ones(len(ts))  # gpu_up, a config value, a zero error count
    steps = np.repeat(np.arange(len(ts) // 40 + 1) % 3, 40)[: len(ts)].astype(float)
    tied = np.tile([5.0, np.inf, 5.0, 7.0, np.inf, 5.0], len(ts) // 6 + 1)[: len(ts)]
    insert_samples(engine, ids, [ts.tolist()] * 3, [steady.tolist(), steps.tolist(), tied.tolist()])
    windows = [(t0, NOW), (t0 + 1234.5, NOW - 777.0)]
    step_list = (30, 60, 300, 3600)
    before = {(w, s): read_samples(engine, ids, *w, step=s) for w in windows for s in step_list}

    compact(engine=engine, now=NOW, head_seconds=3600)

    for (window, step), got in before.items():
        flat = got[ids[0]]
        assert len(np.unique(flat.ts // step)) == len(flat.ts), (window, step)  # one a bucket
        _same(read_samples(engine, ids, *window, step=step), got)


def test_a_second_pass_changes_nothing_and_time_bounds_see_chunks(engine):
    ids, t0 = _store(engine, hours=3.0)
    with engine.connect() as conn:
        bounds = time_bounds(conn=conn)
    compact(engine=engine, now=NOW, head_seconds=3600)
    with engine.connect() as conn:
        chunks_before = conn.exec_driver_sql("SELECT * FROM sample_chunks ORDER BY 1, 2").all()
        assert time_bounds(conn=conn) == bounds
    again = compact(engine=engine, now=NOW, head_seconds=3600)
    assert again.samples == 0 and again.hours == []
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT * FROM sample_chunks ORDER BY 1, 2").all() == (
            chunks_before
        )
        conn.exec_driver_sql("DELETE FROM samples")
        assert time_bounds(conn=conn)[0] == bounds[0]  # chunks alone still bound the store


def test_time_bounds_not_after_a_time_leave_later_raw_samples_out(engine):
    ids, t0 = _store(engine, hours=3.0)
    compact(engine=engine, now=NOW, head_seconds=3600)  # the first two hours in chunks
    with engine.connect() as conn:
        first, last = time_bounds(conn=conn)
    hour = (int(last * 1000) // HOUR_MS) * HOUR_MS / 1000.0  # the last raw hour's start
    got = read_samples(engine, ids, t0, last)
    stamps = np.sort(np.concatenate([d.ts for d in got.values()]))
    assert insert_samples(engine, ids[:1], [[hour + 1e8]], [[1.0]]) == 1  # three years ahead
    with engine.connect() as conn:
        assert time_bounds(conn=conn) == (first, hour + 1e8)
        assert time_bounds(conn=conn, not_after=last + 1e6) == (first, last)
        assert time_bounds(conn=conn, not_after=last) == (first, last)
        # Inside the last raw hour, and before it: the hour's later samples do not count.
        inside = float(stamps[np.searchsorted(stamps, hour + 600, side="right") - 1])
        assert time_bounds(conn=conn, not_after=hour + 600) == (first, inside)
        before = float(stamps[np.searchsorted(stamps, hour) - 1])  # the raw hour before
        assert time_bounds(conn=conn, not_after=hour - 0.001) == (first, before)
        ahead_of_its_first = float(stamps[stamps >= hour][0]) - 0.001  # in the hour, none yet
        assert time_bounds(conn=conn, not_after=ahead_of_its_first) == (first, before)


def test_late_samples_for_a_compacted_hour_are_merged_and_retries_count_nothing(engine):
    ids, t0 = _store(engine)
    hour_start = (int(t0 * 1000) // HOUR_MS + 1) * HOUR_MS / 1000.0
    window = (hour_start, hour_start + 3599.999)
    old = read_samples(engine, ids, *window)
    compact(engine=engine, now=NOW, head_seconds=3600)

    taken = old[ids[1]]
    late_ts = [float(taken.ts[5]), float(taken.ts[6]), hour_start + 7.777, hour_start + 8.888]
    late_values = [-1.0, -2.0, 123.5, float("nan")]  # two resends with other values, two new
    added = insert_samples(engine, [ids[1]], [late_ts], [late_values])
    assert added == 2

    def check():
        got = read_samples(engine, ids, *window)[ids[1]]
        assert len(got.ts) == len(taken.ts) + 2
        assert len(np.unique(got.ts)) == len(got.ts)  # no duplicate timestamps
        at = dict(zip(got.ts.tolist(), got.values.tolist(), strict=True))
        assert at[late_ts[0]] == taken.values[5] and at[late_ts[1]] == taken.values[6]
        assert at[late_ts[2]] == 123.5 and np.isnan(at[late_ts[3]])

    check()  # merged on read while the late samples are raw
    assert compact(engine=engine, now=NOW, head_seconds=3600).samples == 2
    check()  # and after the next pass merged them into the chunk
    # The same batch again adds nothing.
    assert insert_samples(engine, [ids[1]], [late_ts], [late_values]) == 0


@pytest.mark.parametrize("step", [None, 3600.0])
def test_a_read_to_the_last_allowed_time_allocates_about_what_it_returns(engine, step):
    ids, _ = _store(engine)
    compact(engine=engine, now=NOW, head_seconds=3600)  # raw and chunked hours both
    want = read_samples(engine, ids, 0, NOW + 1, step)
    tracemalloc.start()
    try:
        got = read_samples(engine, ids, 0, MAX_TIMESTAMP, step)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _same(got, want)
    assert peak < 32 * 2**20  # listing the 27 million hours to the year 5138 took 1 GiB


def test_late_rows_days_apart_decode_only_their_own_days_chunks(engine, monkeypatch):
    ids = store_series(engine, 2)
    day = 86_400.0
    start = (NOW // day - 4) * day  # four whole days before NOW's
    ts = np.arange(start, start + 4 * day, 600.0) + 0.25
    insert_samples(engine, ids, [ts.tolist()] * 2, [(ts / 1e6).tolist(), (-ts).tolist()])
    compact(engine=engine, now=NOW, head_seconds=3600, max_hours=10**6)
    first, last = int(start // 3600), int(start // 3600) + 3 * 24  # the first and last day
    with engine.connect() as conn:
        starts = conn.exec_driver_sql("SELECT hour FROM sample_chunks").scalars().all()
    assert len(starts) >= 8 and count_rows(engine) == 0
    wanted = sum(first <= h < first + 24 or last <= h < last + 24 for h in starts)
    decoded = []
    real = chunks.decode
    monkeypatch.setattr(chunks, "decode", lambda *blobs: decoded.append(1) or real(*blobs))

    # Each series: a clock at zero, a resend on the first day, a new sample on the last.
    late = [3600.5, float(ts[3]), start + 3 * day + 300.0]
    assert insert_samples(engine, ids, [late] * 2, [[1.0, 2.0, 3.0]] * 2) == 4
    assert len(decoded) == wanted  # not the chunks of the two days between
    assert insert_samples(engine, ids, [late] * 2, [[1.0, 2.0, 3.0]] * 2) == 0
    got = read_samples(engine, ids, 0, start + 4 * day)[ids[1]]
    at = dict(zip(got.ts.tolist(), got.values.tolist(), strict=True))
    assert len(got.ts) == len(ts) + 2
    assert at[3600.5] == 1.0 and at[float(ts[3])] == -ts[3] and at[late[2]] == 3.0


def test_a_batch_over_thousands_of_days_costs_a_few_statements(engine):
    ids, _ = _store(engine)
    compact(engine=engine, now=NOW, head_seconds=3600)  # chunks exist, none on those days
    stamps = [86_400.0 * d + 0.5 for d in range(3000)]  # a sample a day from 1970 on
    statements = []
    event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    assert insert_samples(engine, ids[:1], [stamps], [[1.0] * len(stamps)]) == len(stamps)
    # Which days hold chunks is asked in SQL, not a query a day (3,000 then).
    assert len(statements) < 60, statements[:5]


@pytest.mark.parametrize("piece", [1, 200])  # series rolled up at a time
def test_rollups_rebuilt_from_chunks_equal_rollups_from_raw(engine, monkeypatch, piece):
    monkeypatch.setattr(rollups, "REBUILD_SERIES", piece)
    ids, t0 = _store(engine)
    hours = list(range(int(t0 * 1000) // HOUR_MS, int((NOW - 3600) * 1000) // HOUR_MS))
    query = (
        'SELECT hour, series_id, ts, "min", "max", "sum", "count" FROM samples_1m ORDER BY 1, 2, 3'
    )
    with write_transaction(engine) as conn:
        rebuild_hours(conn=conn, hours=hours)
    with engine.connect() as conn:
        from_raw = conn.exec_driver_sql(query).all()
    compact(engine=engine, now=NOW, head_seconds=3600)
    with write_transaction(engine) as conn:
        assert chunks.chunked_hours(conn=conn, hours=hours)  # the chunk path is the one taken
        rebuild_hours(conn=conn, hours=hours)
    with engine.connect() as conn:
        from_chunks = conn.exec_driver_sql(query).all()
    assert len(from_chunks) == len(from_raw) > 1000
    for a, b in zip(from_chunks, from_raw, strict=True):
        assert a[:5] == b[:5] and a[6] == b[6]
        assert (a[5] is None and b[5] is None) or a[5] == pytest.approx(
            b[5], rel=1e-12, nan_ok=True
        )


def test_retention_rolls_up_and_drops_chunks_past_the_cutoff(engine):
    ids, t0 = _store(engine, hours=30.0)
    compact(engine=engine, now=NOW, head_seconds=3600, max_hours=100)
    if engine.dialect.name == "postgresql":  # yesterday's emptied partition gave its files back
        from correlator.store.tsdb.partitions import partition_name

        with engine.connect() as conn:
            name = partition_name(int(NOW // 86400) - 1)
            heap, total = conn.exec_driver_sql(
                f"SELECT pg_relation_size('{name}'), pg_total_relation_size('{name}')"
            ).one()
        assert heap == 0 and total <= 8192  # what is left: the empty key index's metapage
    with engine.connect() as conn:
        held = chunks.sample_count(conn=conn)
        day = int(NOW // 86400) * 24  # today's first hour: yesterday goes
        gone = chunks.sample_count(conn=conn, to_hour=day)
    assert 0 < gone < held

    report = run_retention(engine=engine, raw_days=0, rollup_days=90, now=NOW)

    assert report.deleted_raw_rows >= gone and report.rolled_up_minutes > 0
    with engine.connect() as conn:
        assert (
            conn.exec_driver_sql(f"SELECT COUNT(*) FROM sample_chunks WHERE hour < {day}").scalar()
            == 0
        )
        assert chunks.sample_count(conn=conn) == held - gone
        rolled = conn.exec_driver_sql(
            f'SELECT SUM("count") FROM samples_1m WHERE hour < {day}'
        ).scalar()
    assert rolled > 0.9 * gone  # every non-NaN sample that went is in the rollups
    today = read_samples(engine, ids, day * 3600, NOW)
    assert all(d.ts.min() >= day * 3600 for d in today.values())


def before_count(data) -> int:
    """Return how many samples a read holds."""
    return sum(len(d.ts) for d in data.values())


def test_an_interrupted_compaction_resumes_where_it_stopped(engine):
    ids, t0 = _store(engine, hours=30.0)  # two days: at least two transactions
    before = read_samples(engine, ids, t0 - 1, NOW + 1)

    def stop(done, total, report):
        raise KeyboardInterrupt  # after the first one committed

    with pytest.raises(KeyboardInterrupt):
        compact(engine=engine, now=NOW, head_seconds=3600, progress=stop)
    _same(read_samples(engine, ids, t0 - 1, NOW + 1), before)  # half raw, half chunked
    with engine.connect() as conn:
        assert 0 < chunks.sample_count(conn=conn) < before_count(before)
    rest = compact(engine=engine, now=NOW, head_seconds=3600, max_hours=100)
    assert len(rest.hours) >= 2 and rest.pending == 0
    _same(read_samples(engine, ids, t0 - 1, NOW + 1), before)


def test_thaw_moves_chunked_samples_back_to_raw(engine):
    ids, t0 = _store(engine)
    before = read_samples(engine, ids, t0 - 1, NOW + 1)
    compact(engine=engine, now=NOW, head_seconds=3600)
    first = int(t0 * 1000) // HOUR_MS + 2
    with write_transaction(engine) as conn:
        moved = thaw(
            conn=conn,
            series_id=ids[2],
            from_hour=first,
            insert=lambda rows: insert_rows(conn=conn, rows=rows),
        )
        assert moved > 0
        left = chunks.read_chunks(conn=conn, series_ids=[ids[2]], first_hour=first, last_hour=10**9)
        assert left == []
    _same(read_samples(engine, ids, t0 - 1, NOW + 1), before)


@pytest.mark.parametrize("piece", [1, 200])  # series rolled up at a time
def test_compacted_hours_drop_their_rollups_and_a_late_sample_rolls_them_again(
    engine, monkeypatch, piece
):
    from correlator.store.tsdb.rollup_state import COMPACTED, ROLLED, STALE, hour_states
    from correlator.store.tsdb.rollups import roll_up

    monkeypatch.setattr(rollups, "REBUILD_SERIES", piece)
    ids, t0 = _store(engine)
    roll_up(engine=engine, now=NOW, max_hours=100)
    before = {s: read_samples(engine, ids, t0 - 1, NOW + 1, step=s) for s in (60, 300, 3600)}
    report = compact(engine=engine, now=NOW, head_seconds=3600)
    with engine.connect() as conn:
        states = hour_states(conn=conn, first=0, last=10**7)
        kept = conn.exec_driver_sql("SELECT DISTINCT hour FROM samples_1m").scalars().all()
    assert all(states[h] == COMPACTED for h in report.hours)
    assert not set(kept) & set(report.hours)  # chunks answer for those hours now
    for step, got in before.items():  # rollups' minute extremes, now the raw ones
        assert _buckets(read_samples(engine, ids, t0 - 1, NOW + 1, step=step), step) == _buckets(
            got, step
        )

    hour = report.hours[1]
    late = hour * 3600 + 1.5
    assert insert_samples(engine, [ids[0], ids[3]], [[late], [late]], [[1e6], [2e6]]) == 2
    with engine.connect() as conn:
        assert hour_states(conn=conn, first=hour, last=hour) == {hour: STALE}
    roll_up(engine=engine, now=NOW, max_hours=100)  # rebuilt from the chunks and the raw sample
    with engine.connect() as conn:
        assert hour_states(conn=conn, first=hour, last=hour) == {hour: ROLLED}
        top = conn.exec_driver_sql(
            f'SELECT series_id, "max" FROM samples_1m WHERE hour = {hour} '
            f"AND ts = {hour * HOUR_MS} ORDER BY series_id"  # the late samples' minute
        )
        assert dict(top.all()) == {ids[0]: 1e6, ids[1]: ANY, ids[2]: ANY, ids[3]: 2e6}
    assert compact(engine=engine, now=NOW, head_seconds=3600).hours == [hour]
    got = read_samples(engine, ids, hour * 3600, hour * 3600 + 59, step=60)
    assert got[ids[0]].values.max() == 1e6 and got[ids[3]].values.max() == 2e6


def test_db_compact_converts_a_store_with_progress_and_a_second_run_finds_nothing(
    engine, db_url, capsys
):
    from causeline.cli import main

    ids, t0 = _store(engine, hours=30.0)
    before = read_samples(engine, ids, t0 - 1, NOW + 1)

    assert main(["db", "compact", "--database-url", db_url, "--head-hours", "1"]) == 0
    out = capsys.readouterr()
    assert "compacting: " in out.err and "hours (100%)" in out.err
    first = json.loads(out.out)
    assert first["samples"] > 0 and first["pending"] == 0
    assert count_rows(engine, "samples") == 0  # the data is older than any head: all of it moves
    _same(read_samples(engine, ids, t0 - 1, NOW + 1), before)

    assert main(["db", "compact", "--database-url", db_url]) == 0
    assert json.loads(capsys.readouterr().out)["samples"] == 0


@pytest.mark.parametrize(
    "name", ["public/01-input-length-drift", "petshop-low/petshop-low_traffic-test-issue_0"]
)
def test_a_stored_incident_analyzes_the_same_after_compaction(engine, name):
    from correlator.analysis.pipeline import analyze
    from correlator.bundle import read_bundle
    from correlator.store.bundles import export_bundle, import_bundle

    bundle = read_bundle(scenarios_dir() / name)
    first = import_bundle(engine=engine, bundle=bundle)
    before = export_bundle(engine=engine, start=0, end=2e9)
    report = compact(engine=engine, head_seconds=3600, max_hours=10**6)
    assert report.samples == first.inserted and count_rows(engine, "samples") == 0
    assert import_bundle(engine=engine, bundle=bundle).inserted == 0  # a retry adds nothing
    after = export_bundle(engine=engine, start=0, end=2e9)
    for a, b in zip(before.series, after.series, strict=True):
        assert (a.name, a.labels) == (b.name, b.labels)
        np.testing.assert_array_equal(a.ts, b.ts)
        np.testing.assert_array_equal(a.values, b.values)
    assert _ranked(analyze(after)) == _ranked(analyze(before))


def _ranked(result: dict) -> str:
    """Return an analysis as text, its timings left out."""
    return json.dumps({k: v for k, v in result.items() if k != "timings"}, sort_keys=True)


def test_hours_compacted_together_give_the_chunks_of_one_hour_at_a_time(engine):
    _store(engine, hours=30.0)
    query = "SELECT * FROM sample_chunks ORDER BY series_id, hour"
    one_by_one = compact(  # every hour on its own
        engine=engine, now=NOW, head_seconds=3600, max_hours=100, group_rows=1
    )
    with engine.connect() as conn:
        expected = conn.exec_driver_sql(query).all()
        conn.exec_driver_sql("DELETE FROM sample_chunks")
        conn.commit()
    ids, t0 = _store(engine, hours=30.0)  # the same samples again, raw
    together = compact(engine=engine, now=NOW, head_seconds=3600, max_hours=100, group_rows=10**9)
    assert together.hours == one_by_one.hours and together.samples == one_by_one.samples
    assert together.chunks < one_by_one.chunks  # fewer writes for the same chunks
    with engine.connect() as conn:
        assert conn.exec_driver_sql(query).all() == expected


@pytest.mark.parametrize("group_rows", [1, 10**9])  # hour by hour, or all hours at once
def test_a_large_group_compacts_in_transactions_of_whole_series(engine, group_rows):
    """Each series' chunks come out as one transaction for every hour would build them."""
    _store(engine, hours=6.0)  # 240 samples a series an hour: 300 rows take one series
    query = "SELECT * FROM sample_chunks ORDER BY series_id, hour"
    whole = compact(engine=engine, now=NOW, head_seconds=3600, max_hours=100, group_rows=10**9)
    with engine.connect() as conn:
        expected = conn.exec_driver_sql(query).all()
        conn.exec_driver_sql("DELETE FROM sample_chunks")
        conn.commit()
    ids, t0 = _store(engine, hours=6.0)  # the same samples again, raw
    before = read_samples(engine, ids, t0 - 1, NOW + 1)
    calls = []
    sliced = compact(
        engine=engine,
        now=NOW,
        head_seconds=3600,
        max_hours=100,
        group_rows=group_rows,
        slice_rows=300,
        progress=lambda done, total, report: calls.append(done),
    )
    assert sliced.hours == whole.hours and sliced.samples == whole.samples
    hours = len(sliced.hours)
    if group_rows == 1:  # a transaction a series an hour
        assert calls == [h + (k == 3) for h in range(hours) for k in range(4)]
    else:  # a transaction a series for all hours
        assert calls == [0, 0, 0, hours]
    with engine.connect() as conn:
        assert conn.exec_driver_sql(query).all() == expected
    _same(read_samples(engine, ids, t0 - 1, NOW + 1), before)


def test_a_pass_stopped_inside_an_hour_keeps_late_samples_and_finishes_it(engine):
    from correlator.store.tsdb.rollup_state import COMPACTED, hour_states
    from correlator.store.tsdb.rollups import roll_up

    ids, t0 = _store(engine, hours=3.0)  # hours 10 (from 10:20) and 11 compact, not 12
    roll_up(engine=engine, now=NOW, max_hours=100)
    hour = int(t0 * 1000) // HOUR_MS
    window = (hour * 3600.0, hour * 3600 + 3599.999)
    before = read_samples(engine, ids, t0 - 1, NOW + 1)
    minutes = read_samples(engine, ids, *window, step=60)

    def stop(done, total, report):
        raise KeyboardInterrupt  # after the first series of the first hour committed

    with pytest.raises(KeyboardInterrupt):
        compact(engine=engine, now=NOW, head_seconds=3600, slice_rows=300, progress=stop)
    _same(read_samples(engine, ids, t0 - 1, NOW + 1), before)  # one series chunked
    with engine.connect() as conn:
        held = conn.exec_driver_sql("SELECT DISTINCT series_id FROM sample_chunks").all()
        assert held == [(ids[0],)]
        assert hour_states(conn=conn, first=hour, last=hour)[hour] != COMPACTED
    # Its rollups stay until the whole hour is done: stepped reads of it are unchanged.
    assert _buckets(read_samples(engine, ids, *window, step=60), 60) == _buckets(minutes, 60)

    # Between two transactions, a resend and a new late sample for the chunked series.
    taken = before[ids[0]]
    late = [float(taken.ts[3]), hour * 3600 + 0.5]
    assert insert_samples(engine, [ids[0]], [late], [[-1.0, 77.25]]) == 1
    rest = compact(engine=engine, now=NOW, head_seconds=3600, slice_rows=300)
    assert rest.hours == [hour, hour + 1]
    with engine.connect() as conn:
        states = hour_states(conn=conn, first=hour, last=hour + 1)
        assert states == {hour: COMPACTED, hour + 1: COMPACTED}
        assert (
            conn.exec_driver_sql(f"SELECT COUNT(*) FROM samples WHERE hour <= {hour + 1}").scalar()
            == 0
        )
    got = read_samples(engine, ids, hour * 3600, NOW + 1)
    at = dict(zip(got[ids[0]].ts.tolist(), got[ids[0]].values.tolist(), strict=True))
    assert len(at) == len(taken.ts) + 1
    assert at[late[0]] == taken.values[3] and at[late[1]] == 77.25
    del got[ids[0]], before[ids[0]]
    _same(got, before)
