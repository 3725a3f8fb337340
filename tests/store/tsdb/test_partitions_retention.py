"""PostgreSQL at scale: partitioned COPY ingest under replays, partitions, retention, rollups."""

from __future__ import annotations

import time

import numpy as np
import pytest

from correlator.store.engine import write_transaction
from correlator.store.tsdb.partitions import (
    DAYS_AHEAD,
    DEFAULT,
    NEW_PER_BATCH,
    adopt_default,
    batch_days,
    ensure_partitions,
    is_partitioned,
    list_partitions,
    partition_name,
)
from correlator.store.tsdb.read import read_range
from correlator.store.tsdb.retention import cutoff_hour, run_retention
from correlator.store.tsdb.write import HOUR_MS
from tests.helpers import count_rows, insert_samples, store_series

DAY = 86_400.0
NOW = 1_764_633_600.0 + 13 * 3600.0  # 2025-12-02 13:00 UTC


@pytest.fixture
def pg_engine(engine):
    """Yield the engine when it is PostgreSQL (partitioned by the migrations)."""
    if engine.dialect.name != "postgresql":
        pytest.skip("partitions exist on PostgreSQL only")
    with engine.connect() as conn:
        assert is_partitioned(conn=conn)
    return engine


def test_copy_ingest_is_idempotent_under_replays(pg_engine):
    ids = store_series(pg_engine, 40)
    t0 = NOW - 1.5 * DAY  # two days, so rows cross a partition boundary
    ts = [[t0 + 60.0 * k for k in range(2000)] for _ in ids]
    vals = [[float(i * k) for k in range(2000)] for i in range(len(ids))]
    first = [t[:1200] for t in ts], [v[:1200] for v in vals]
    assert insert_samples(pg_engine, ids, *first) == 40 * 1200
    assert insert_samples(pg_engine, ids, *first) == 0  # same batch again
    overlap = [t[800:] for t in ts], [v[800:] for v in vals]
    assert insert_samples(pg_engine, ids, *overlap) == 40 * 800  # only the new part
    assert insert_samples(pg_engine, ids, *overlap) == 0
    assert count_rows(pg_engine) == 40 * 2000
    with pg_engine.connect() as conn:
        days = list_partitions(conn=conn)
        in_default = conn.exec_driver_sql(f"SELECT COUNT(*) FROM {DEFAULT}").scalar()
        per_day = {
            d: conn.exec_driver_sql(f"SELECT COUNT(*) FROM {partition_name(d)}").scalar()
            for d in days
        }
    spanned = {int(t // DAY) for t in (ts[0][0], ts[0][-1])}
    assert spanned <= set(days) and len(spanned) == 2
    assert in_default == 0 and sum(per_day.values()) == 40 * 2000


def test_partitions_created_for_incoming_data(pg_engine):
    ids = store_series(pg_engine, 3)
    old = NOW - 40 * DAY
    with pg_engine.connect() as conn:
        assert int(old // DAY) not in list_partitions(conn=conn)
    assert insert_samples(pg_engine, ids, [[old, old + 60]] * 3, [[1.0, 2.0]] * 3) == 6
    with pg_engine.connect() as conn:
        assert int(old // DAY) in list_partitions(conn=conn)
    # Rows that reached the default partition move into the day's partition when it is made.
    stray = NOW - 50 * DAY
    hour = int(stray * 1000) // HOUR_MS
    with write_transaction(pg_engine) as conn:
        conn.exec_driver_sql(
            f"INSERT INTO samples VALUES ({hour}, {ids[0]}, {int(stray * 1000)}, 5.0)"
        )
        assert conn.exec_driver_sql(f"SELECT COUNT(*) FROM {DEFAULT}").scalar() == 1
        assert ensure_partitions(conn=conn, start=stray, end=stray) == [int(stray // DAY)]
        assert conn.exec_driver_sql(f"SELECT COUNT(*) FROM {DEFAULT}").scalar() == 0
        name = partition_name(int(stray // DAY))
        assert conn.exec_driver_sql(f"SELECT value FROM {name}").scalar() == 5.0
        assert ensure_partitions(conn=conn, start=stray, end=stray) == []


def _minute_aggregates(ts_ms: np.ndarray, values: np.ndarray) -> dict[int, tuple]:
    out = {}
    minutes = ts_ms // 60_000 * 60_000
    for m in np.unique(minutes):
        v = values[minutes == m]
        v = v[~np.isnan(v)]
        agg = (float(v.min()), float(v.max()), float(v.sum())) if len(v) else (None,) * 3
        out[int(m)] = (*agg, len(v))
    return out


def test_retention_removes_exactly_what_it_should(engine):
    ids = store_series(engine, 3)
    rng = np.random.default_rng(7)
    start = NOW - 10 * DAY
    ts = np.arange(start, NOW, 20.0)  # 10 days every 20 s
    vals = [rng.normal(50, 10, len(ts)) for _ in ids]
    vals[1][::97] = np.nan
    for half in np.array_split(np.arange(len(ts)), 2):  # a batch makes at most NEW_PER_BATCH days
        insert_samples(engine, ids, [ts[half].tolist()] * 3, [v[half].tolist() for v in vals])
    total = count_rows(engine)
    assert total == 3 * len(ts)

    dry = run_retention(engine=engine, raw_days=7, now=NOW, dry_run=True)
    assert count_rows(engine) == total and count_rows(engine, "samples_1m") == 0
    report = run_retention(engine=engine, raw_days=7, rollup_days=90, now=NOW)
    cut = cutoff_hour(now=NOW, days=7)
    assert report.raw_cutoff_hour == cut == dry.raw_cutoff_hour
    ts_ms = np.rint(ts * 1000).astype(np.int64)
    expired = ts_ms // HOUR_MS < cut
    assert report.deleted_raw_rows == dry.deleted_raw_rows == 3 * int(expired.sum())
    with engine.connect() as conn:
        kept = conn.exec_driver_sql(
            "SELECT series_id, COUNT(*), MIN(hour) FROM samples GROUP BY series_id"
        ).all()
        rolled = conn.exec_driver_sql(
            'SELECT series_id, ts, "min", "max", "sum", "count" FROM samples_1m'
        ).all()
        if engine.dialect.name == "postgresql":
            days = list_partitions(conn=conn)
            assert min(days) * 24 >= cut  # whole expired days were dropped
            assert set(report.dropped_partitions) == {
                partition_name(d) for d in range(int(start // DAY), cut // 24)
            }
    assert {(r[0], r[1], r[2]) for r in kept} == {(i, int((~expired).sum()), cut) for i in ids}

    got = {(r[0], r[1]): r[2:] for r in rolled}
    for sid, v in zip(ids, vals, strict=True):
        want = _minute_aggregates(ts_ms[expired], v[expired])
        mine = {m: got[(sid, m)] for m in want}
        assert len([k for k in got if k[0] == sid]) == len(want)
        for m, (lo, hi, total_, count) in want.items():
            g = mine[m]
            assert g[3] == count
            if count:
                assert g[0] == pytest.approx(lo) and g[1] == pytest.approx(hi)
                assert g[2] == pytest.approx(total_)
            else:
                assert g[0] is None and g[1] is None and g[2] is None

    # Reads past raw retention are answered from the rollups: each minute's mean...
    with engine.connect() as conn:
        old = read_range(conn=conn, series_ids=ids, start=start, end=NOW)
        stepped = read_range(conn=conn, series_ids=ids, start=start, end=NOW, step=3600)
    for sid, v in zip(ids, vals, strict=True):
        want = _minute_aggregates(ts_ms[expired], v[expired])
        means = {m: a[2] / a[3] for m, a in want.items() if a[3]}
        got_ts = np.rint(old[sid].ts * 1000).astype(np.int64)
        rolled_part = got_ts < cut * HOUR_MS
        rolled_values = old[sid].values[rolled_part]
        assert dict(zip(got_ts[rolled_part].tolist(), rolled_values, strict=True)) == (
            pytest.approx(means)
        )
        assert int((~rolled_part).sum()) == int((~expired).sum())  # raw samples after the cut
        # ...and with a step, each bucket's lowest minimum and highest maximum survive.
        raw_v = v[expired][~np.isnan(v[expired])]
        assert stepped[sid].values.min() == pytest.approx(min(raw_v.min(), np.nanmin(v)))
        assert stepped[sid].values.max() == pytest.approx(max(raw_v.max(), np.nanmax(v)))

    # Idempotent; later on, rollups past their own retention go as well.
    again = run_retention(engine=engine, raw_days=7, now=NOW)
    assert again.deleted_raw_rows == 0 and again.rolled_up_minutes == 0
    later = run_retention(engine=engine, raw_days=7, rollup_days=8, now=NOW + DAY)
    rollup_cut = cutoff_hour(now=NOW + DAY, days=8)
    with engine.connect() as conn:
        left = conn.exec_driver_sql("SELECT MIN(hour) FROM samples_1m").scalar()
    assert later.deleted_rollup_rows > 0 and left >= rollup_cut


def test_partitions_seen_are_remembered_per_engine_and_forgotten_when_dropped(pg_engine):
    from correlator.store.engine import make_engine
    from correlator.store.tsdb import partitions

    ids = store_series(pg_engine, 1)
    insert_samples(pg_engine, ids, [[NOW - 3 * DAY]], [[1.0]])
    day = int((NOW - 3 * DAY) // DAY)
    assert day in partitions._seen[pg_engine].days
    assert all(not isinstance(key, str) for key in partitions._seen)  # no URL keys
    other = make_engine(pg_engine.url.render_as_string(hide_password=False))
    try:
        with write_transaction(other) as conn:
            partitions.drop_partition(conn=conn, day=day)
        assert day not in partitions._seen[pg_engine].days  # the next batch creates it again
        assert insert_samples(pg_engine, ids, [[NOW - 3 * DAY]], [[1.0]]) == 1
        with pg_engine.connect() as conn:
            assert day in list_partitions(conn=conn)
    finally:
        other.dispose()


def test_batch_days_are_the_days_of_its_rows_up_to_days_ahead():
    now = NOW
    today = int(now // DAY)
    hours = np.array([0, 5, 24 * (today - 1), 24 * today + 3, 24 * today + 4], dtype=np.int64)
    assert batch_days(hours, now=now) == {0, today - 1, today}
    ahead = 24 * (today + DAYS_AHEAD)
    hours = np.array([24 * today, ahead + 23, ahead + 24, 10**9], dtype=np.int64)
    assert batch_days(hours, now=now) == {today, today + DAYS_AHEAD}
    assert batch_days(np.array([ahead + 24] * 3, dtype=np.int64), now=now) == set()


def test_a_batch_spanning_years_makes_few_partitions_and_keeps_every_row(pg_engine):
    ids = store_series(pg_engine, 1)
    now = time.time()
    today = int(now // DAY)
    past = [(today - k) * DAY + 60.0 for k in range(19, -1, -1)]  # the last 20 days
    ahead = [(today + DAYS_AHEAD + 1) * DAY + 5.0, now + 365 * DAY]  # clocks ahead
    stamps = [0.0, *past, *ahead]  # and a clock at zero: one batch over 56 years
    values = [float(k) for k in range(len(stamps))]
    with pg_engine.connect() as conn:
        had = set(list_partitions(conn=conn))

    def made() -> set[int]:
        with pg_engine.connect() as conn:
            return set(list_partitions(conn=conn)) - had

    assert insert_samples(pg_engine, ids, [stamps], [values]) == len(stamps)
    assert made() == set(range(today - NEW_PER_BATCH + 1, today + 1)) - had
    # Each resend stores nothing again and makes the next most recent days' partitions.
    assert insert_samples(pg_engine, ids, [stamps], [values]) == 0
    assert made() == set(range(today - 2 * NEW_PER_BATCH + 1, today + 1)) - had
    assert insert_samples(pg_engine, ids, [stamps], [values]) == 0
    assert made() == {0, *range(today - 19, today + 1)} - had
    with pg_engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT ts, value FROM samples ORDER BY ts").all()
        in_default = conn.exec_driver_sql(f"SELECT ts FROM {DEFAULT} ORDER BY ts").scalars()
        assert list(in_default) == [round(t * 1000) for t in ahead]
    assert rows == [(round(t * 1000), v) for t, v in zip(stamps, values, strict=True)]
    # Retention adopts a day that came within DAYS_AHEAD, not one still further.
    with write_transaction(pg_engine) as conn:
        assert adopt_default(conn=conn, from_hour=0, now=now) == []
        assert adopt_default(conn=conn, from_hour=0, now=now + 2 * DAY) == [today + DAYS_AHEAD + 1]
