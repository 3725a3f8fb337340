"""Rollups of recent hours: stepped reads match raw, late samples, job reruns, retention."""

from __future__ import annotations

import asyncio
import contextlib
import time

import numpy as np
import pytest

from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.migrate import upgrade
from correlator.store.tsdb import rollups
from correlator.store.tsdb.retention import (
    cutoff_hour,
    maintain_once,
    run_retention,
    run_retention_job,
)
from correlator.store.tsdb.rollup_state import (
    EXPIRED,
    EXPIRED_LATE,
    ROLLED,
    STALE,
    hour_states,
    mark_late,
    set_states,
)
from correlator.store.tsdb.rollups import roll_up
from correlator.store.tsdb.write import HOUR_MS
from tests.helpers import engine_at, insert_samples, read_samples, store_series

NOW = 1_764_633_600.0 + 13 * 3600.0 + 1234.5  # 2025-12-02 13:20:34.5 UTC
STEPS = (60, 120, 300, 900, 3600)


def _random_store(engine, hours: float = 6.0, seed: int = 3):
    """Store 15 s samples (ms jitter, NaN, ties) of four series up to NOW; return ids, t0."""
    rng = np.random.default_rng(seed)
    ids = store_series(engine, 4)
    t0 = NOW - hours * 3600
    base = np.arange(t0, NOW, 15.0)
    ts, vals = [], []
    for k in range(len(ids)):
        t = base + rng.integers(0, 14_000, len(base)) / 1000.0
        v = rng.normal(50, 10, len(base)).round(1 if k == 3 else 6)  # series 3: many ties
        v[rng.random(len(base)) < 0.05] = np.nan
        v[100:110] = np.nan  # a few NaN-only minutes
        ts.append(t.tolist())
        vals.append(v.tolist())
    insert_samples(engine, ids, ts, vals)
    return ids, t0


def _buckets(data, step: float) -> dict:
    """Return (series, bucket) -> (lowest, highest) of a stepped read."""
    out = {}
    for sid, d in data.items():
        ms = np.rint(d.ts * 1000).astype(np.int64)
        assert len(np.unique(ms)) == len(ms)  # timestamps stay unique
        for b in np.unique(ms // round(step * 1000)):
            v = d.values[ms // round(step * 1000) == b]
            out[(sid, int(b))] = (float(v.min()), float(v.max()))
    return out


def _windows(t0: float, seed: int = 5) -> list[tuple[float, float]]:
    rng = np.random.default_rng(seed)
    windows = [(t0 - 100, NOW + 10), (t0 + 7200, NOW - 600.25), (t0 - 300 * 3600, NOW)]
    for width in (20.0, 61.5, 900.7, 5000.3, 4 * 3600.9):
        start = float(rng.uniform(t0, NOW - width))
        windows.append((start, start + width))
    windows.append((t0 + 3600 * 2 - 30.5, t0 + 3600 * 2 + 30.5))  # around an hour's end
    return windows


def _snapshot(engine) -> tuple[list, list]:
    with engine.connect() as conn:
        rollups = conn.exec_driver_sql(
            "SELECT * FROM samples_1m ORDER BY hour, series_id, ts"
        ).all()
        states = conn.exec_driver_sql("SELECT * FROM samples_1m_hours ORDER BY hour").all()
    return rollups, states


def test_stepped_reads_from_rollups_keep_each_buckets_raw_extremes(engine):
    ids, t0 = _random_store(engine)
    windows = _windows(t0)
    before = {
        (w, s): read_samples(engine, ids, *w, step=s) for w in windows for s in (*STEPS, 144, 30)
    }
    plain = read_samples(engine, ids, t0, NOW)

    report = roll_up(engine=engine, now=NOW, max_hours=100)
    last_done = int((NOW - 300) * 1000) // HOUR_MS - 1  # the newest hour ended 5 min ago
    assert report.hours[0] == last_done and report.hours == sorted(report.hours, reverse=True)
    with engine.connect() as conn:
        states = hour_states(conn=conn, first=0, last=10**7)
    # The hour of NOW is past by the clock, so its (imported) samples marked it STALE.
    assert states == {h: ROLLED for h in report.hours} | {last_done + 1: STALE}

    served_by_minutes = 0
    for (window, step), raw in before.items():
        got = read_samples(engine, ids, *window, step=step)
        if step < 60:  # a step under a minute reads raw, as before
            assert _buckets(got, step) == _buckets(raw, step)
            continue
        if step == 144:  # not whole minutes: a straddling minute goes to one bucket
            for sid in raw:
                assert got[sid].values.min() == raw[sid].values.min()
                assert got[sid].values.max() == raw[sid].values.max()
            continue
        assert _buckets(got, step) == _buckets(raw, step), (window, step)
        served_by_minutes += sum(
            int((np.rint(d.ts * 1000) % 60_000 < 2).sum()) for d in got.values()
        )
    assert served_by_minutes > 1000
    again = read_samples(engine, ids, t0, NOW)  # no step: raw samples, unchanged
    for sid in ids:
        np.testing.assert_array_equal(again[sid].ts, plain[sid].ts)
        np.testing.assert_array_equal(again[sid].values, plain[sid].values)


def test_a_late_sample_shows_at_once_and_after_the_hour_is_rolled_again(engine):
    ids, t0 = _random_store(engine)
    roll_up(engine=engine, now=NOW, max_hours=100)
    late_ts = t0 + 2 * 3600 + 1234.567
    hour = int(late_ts * 1000) // HOUR_MS
    assert insert_samples(engine, [ids[0]], [[late_ts]], [[1e6]]) == 1
    with engine.connect() as conn:
        assert hour_states(conn=conn, first=hour, last=hour) == {hour: STALE}
    window = (t0, NOW)
    seen = read_samples(engine, ids, *window, step=300)[ids[0]]
    assert seen.values.max() == 1e6 and seen.ts[seen.values.argmax()] == pytest.approx(late_ts)

    report = roll_up(engine=engine, now=NOW, max_hours=100)
    assert report.hours == [hour]
    seen = read_samples(engine, ids, *window, step=300)[ids[0]]
    assert seen.values.max() == 1e6
    assert seen.ts[seen.values.argmax()] == pytest.approx((late_ts // 60) * 60, abs=0.002)
    rolled = _snapshot(engine)

    # A retried batch stores nothing new and leaves the rollup as it is.
    assert insert_samples(engine, [ids[0]], [[late_ts]], [[1e6]]) == 0
    assert roll_up(engine=engine, now=NOW, max_hours=100).hours == []
    assert _snapshot(engine) == rolled
    minute = int(late_ts // 60) * 60_000
    with engine.connect() as conn:
        (count,) = conn.exec_driver_sql(
            f'SELECT "count" FROM samples_1m WHERE series_id = {ids[0]} AND ts = {minute}'
        ).one()
        raw = conn.exec_driver_sql(
            f"SELECT COUNT(value) FROM samples WHERE series_id = {ids[0]} "
            f"AND ts >= {minute} AND ts < {minute + 60_000}"
        ).scalar()
    assert count == raw


def test_an_hour_marked_late_while_it_is_rebuilt_stays_stale(engine, monkeypatch):
    _random_store(engine, hours=3)
    real = rollups.rebuild_hours

    def racing(*, conn, hours):
        written = real(conn=conn, hours=hours)
        mark_late(conn=conn, hours=hours)  # a late sample lands before the job's last step
        return written

    monkeypatch.setattr(rollups, "rebuild_hours", racing)
    (hour,) = roll_up(engine=engine, now=NOW, max_hours=1).hours
    with engine.connect() as conn:
        assert hour_states(conn=conn, first=hour, last=hour) == {hour: STALE}
    monkeypatch.undo()
    assert roll_up(engine=engine, now=NOW, max_hours=1).hours == [hour]
    with engine.connect() as conn:
        assert hour_states(conn=conn, first=hour, last=hour) == {hour: ROLLED}


def test_the_job_is_bounded_and_a_rerun_changes_nothing(engine):
    ids, _ = _random_store(engine, hours=5)
    first = roll_up(engine=engine, now=NOW, max_hours=2)
    assert len(first.hours) == 2 and first.pending > 0
    while roll_up(engine=engine, now=NOW, max_hours=2).hours:
        pass
    done = _snapshot(engine)
    again = roll_up(engine=engine, now=NOW, max_hours=100)
    assert again.hours == [] and again.pending == 0
    assert _snapshot(engine) == done
    # Fresh samples (of the current hour) write no hour state.
    insert_samples(engine, [ids[0]], [[time.time()]], [[1.0]])
    assert _snapshot(engine)[1] == done[1]


def test_retention_after_rollups_keeps_counts_right(engine):
    day = 86_400.0
    ids = store_series(engine, 2)
    rng = np.random.default_rng(11)
    ts = np.arange(NOW - 10 * day, NOW, 60.0) + 7.5
    vals = [rng.normal(0, 1, len(ts)) for _ in ids]
    vals[1][::13] = np.nan
    insert_samples(engine, ids, [ts.tolist()] * 2, [v.tolist() for v in vals])
    while roll_up(engine=engine, now=NOW, max_hours=500).hours:
        pass
    cut = cutoff_hour(now=NOW, days=7)
    stale_ts = (cut - 30) * 3600 + 100.0  # an old hour, rolled up, then a late sample
    assert insert_samples(engine, [ids[0]], [[stale_ts]], [[99.0]]) == 1

    report = run_retention(engine=engine, raw_days=7, rollup_days=90, now=NOW)
    assert report.rolled_up_minutes == 2 * 60  # only the stale hour is rebuilt
    ms = np.rint(ts * 1000).astype(np.int64)

    def counts() -> dict:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql('SELECT series_id, ts, "count" FROM samples_1m').all()
        return {(r[0], r[1]): r[2] for r in rows}

    got = counts()
    rolled_end = int((NOW - 300) * 1000) // HOUR_MS * HOUR_MS  # NOW's hour is not complete
    assert max(m for _, m in got) < rolled_end
    for sid, v in zip(ids, vals, strict=True):
        minutes = ms // 60_000 * 60_000
        for m, n in zip(minutes.tolist(), (~np.isnan(v)).astype(int).tolist(), strict=True):
            if m >= rolled_end:
                continue
            extra = 1 if (sid, m) == (ids[0], int(stale_ts // 60) * 60_000) else 0
            assert got[(sid, m)] == n + extra
    with engine.connect() as conn:
        states = hour_states(conn=conn, first=0, last=10**7)
        assert (
            conn.exec_driver_sql(f"SELECT COUNT(*) FROM samples WHERE hour < {cut}").scalar() == 0
        )
    assert {s for h, s in states.items() if h < cut} == {EXPIRED}
    assert {s for h, s in states.items() if cut <= h < rolled_end // HOUR_MS} == {ROLLED}

    # A sample later than retention: read beside the rollups, then merged in once.
    old_ts = (cut - 50) * 3600 + 200.0
    assert insert_samples(engine, [ids[0]], [[old_ts]], [[-99.0]]) == 1
    with engine.connect() as conn:
        assert hour_states(conn=conn, first=cut - 50, last=cut - 50) == {cut - 50: EXPIRED_LATE}
    seen = read_samples(engine, ids, old_ts - 3600, old_ts + 3600, step=600)[ids[0]]
    assert seen.values.min() == -99.0
    merged = run_retention(engine=engine, raw_days=7, rollup_days=90, now=NOW)
    assert merged.rolled_up_minutes == 1 and merged.deleted_raw_rows == 1
    assert counts()[(ids[0], int(old_ts // 60) * 60_000)] == 2
    assert run_retention(engine=engine, raw_days=7, now=NOW).rolled_up_minutes == 0

    # Rollups past their own retention go, with their hours' state.
    later = run_retention(engine=engine, raw_days=7, rollup_days=8, now=NOW + day)
    rollup_cut = cutoff_hour(now=NOW + day, days=8)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT MIN(hour) FROM samples_1m").scalar() >= rollup_cut
        assert min(hour_states(conn=conn, first=0, last=10**7)) >= rollup_cut
    assert later.deleted_rollup_rows > 0


def test_the_migration_marks_rollups_written_by_retention_expired(db_url):
    with engine_at(db_url, "0006") as engine:
        hour = int(NOW * 1000) // HOUR_MS - 200
        with write_transaction(engine) as conn:
            for h in (hour, hour + 3):
                conn.exec_driver_sql(
                    'INSERT INTO samples_1m (hour, series_id, ts, "min", "max", "sum", "count") '
                    f"VALUES ({h}, 1, {h * HOUR_MS}, 1.0, 2.0, 3.0, 2)"
                )
            conn.exec_driver_sql(
                f"INSERT INTO samples (hour, series_id, ts, value) VALUES "
                f"({hour + 1}, 1, {(hour + 1) * HOUR_MS + 5}, 7.0)"
            )
        upgrade(engine)
        with engine.connect() as conn:
            states = hour_states(conn=conn, first=0, last=10**7)
        assert states == {
            hour: EXPIRED,
            hour + 1: EXPIRED_LATE,
            hour + 2: EXPIRED,
            hour + 3: EXPIRED,
        }


def test_the_service_job_rolls_up_under_the_retention_lease(engine):
    _random_store(engine, hours=2)
    settings = ServiceSettings(  # NOW is long past: keep its raw samples, uncompacted
        database_url=str(engine.url),
        rollup_interval_seconds=0.05,
        raw_retention_days=10_000,
        compaction_enabled=False,
    )
    done = maintain_once(engine=engine, settings=settings, holder="b", rollup=False)
    assert set(done) == {"retention"}  # retention alone, rollups left to the job
    assert maintain_once(engine=engine, settings=settings, holder="a") is None  # b holds it

    async def run_for_a_while() -> None:
        task = asyncio.create_task(run_retention_job(engine, settings=settings, holder="b"))
        for _ in range(200):
            await asyncio.sleep(0.05)
            with engine.connect() as conn:
                if ROLLED in hour_states(conn=conn, first=0, last=10**7).values():
                    break
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(run_for_a_while())
    with engine.connect() as conn:
        assert ROLLED in hour_states(conn=conn, first=0, last=10**7).values()


def test_hours_with_nothing_in_them_are_never_pending(engine):
    ids = store_series(engine, 1)
    recent = int(NOW // 3600) - 2
    assert insert_samples(engine, ids, [[3600.5, recent * 3600.0 + 1]], [[1.0, 2.0]]) == 2
    with write_transaction(engine) as conn:  # a stale mark left on an hour with no samples
        set_states(conn=conn, hours=[recent - 5], state=STALE)
    report = roll_up(engine=engine, now=NOW)
    # 1970's hour and the two others, not the 490,000 empty hours between them.
    assert report.hours == [recent, recent - 5, 1] and report.pending == 0
    with engine.connect() as conn:
        assert hour_states(conn=conn, first=0, last=10**7) == {
            1: ROLLED,
            recent - 5: ROLLED,
            recent: ROLLED,
        }
    assert roll_up(engine=engine, now=NOW).hours == []
