"""Storage at rest: bytes per sample raw and after compaction, compaction speed, 24 h reads.

For each engine it stores ``--days`` of ``--series`` series ``--step`` seconds apart (by the
store's own ingest path, ending two hours ago), then prints:

- bytes per sample at rest of the raw layout (``samples`` and ``sample_runs`` with their
  indexes: keyed rows, or runs with ``--runs``);
- compaction: samples/s, and CPU seconds per million samples, from which the CPU share of
  a fleet writing ``--fleet-rate`` samples/s follows;
- bytes per sample at rest after compaction (``samples``, ``sample_runs`` and
  ``sample_chunks`` with their indexes; after VACUUM, and on PostgreSQL after VACUUM FULL
  too, which also gives back the pages of deleted rows), and the 1-minute rollups apart,
  before (every hour rolled up) and after (compacted hours drop theirs);
- server-side time of ``read_range`` for 24 h of ``--read-series`` series at the board's
  step (24 h over 1,000 points: 3 min) and without a step, before and after compaction.

Values (``--values``): ``mixed`` is what exporters send (counters, gauges rounded to two
decimals, 0/1 flags, latencies to 0.1 ms); ``smooth`` is benchmarks/ingest.py's
``sid + sin(t)`` at full precision.

    python benchmarks/storage.py --series 1000 --days 30 --step 300
    python benchmarks/storage.py --engines sqlite --series 200 --days 3 --step 15
    python benchmarks/storage.py --series 1000 --days 3 --step 15 --runs 20
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest import drop_pg, pg_database  # noqa: E402  (benchmarks/ingest.py)

DAY = 86_400


def values_of(kind: str, sid: int, ts: np.ndarray, rng) -> np.ndarray:
    """Return one series' values of the given kind at these unix-second times."""
    if kind == "smooth":
        return sid + np.sin(ts * 1000 / 6e5)
    shape = sid % 4
    n = len(ts)
    if shape == 0:  # a counter
        return np.cumsum(rng.poisson(120, n)).astype(np.float64)
    if shape == 1:  # a gauge to two decimals
        return np.round(50 + np.cumsum(rng.normal(0, 0.5, n)), 2)
    if shape == 2:  # a flag
        return (rng.random(n) < 0.01).astype(np.float64)
    return np.round(rng.gamma(4.0, 12.0, n), 1)  # a latency in ms to 0.1


def bench_series(engine, n_series: int) -> list[int]:
    """Create the benchmark's series (``bench_metric{i=...}``); return their ids in order."""
    from correlator.store.engine import write_transaction
    from correlator.store.tsdb.series import ensure_series

    with write_transaction(engine) as conn:
        ids = ensure_series(
            conn=conn, items={f"s{i}": ("bench_metric", {"i": str(i)}) for i in range(n_series)}
        )
    return [ids[f"s{i}"] for i in range(n_series)]


def store_span(
    engine, sids: list[int], ts: np.ndarray, kind: str, rng, points: int | None = None
) -> int:
    """Store every series at these times through insert_columns, 250 series a transaction.

    With ``points``, a transaction holds that many points of each series, as a live sender's
    batch does.
    """
    from correlator.store.engine import write_transaction
    from correlator.store.tsdb.write import insert_columns, sample_columns

    total = 0
    step = points or len(ts)
    for i in range(0, len(sids), 250):
        group = sids[i : i + 250]
        vals = [values_of(kind, sid, ts, rng) for sid in group]
        for j in range(0, len(ts), step):
            part = slice(j, j + step)
            cols = sample_columns(group, [ts[part]] * len(group), [v[part] for v in vals])
            with write_transaction(engine) as conn:
                total += insert_columns(conn=conn, cols=cols)
    return total


def fill(
    engine, n_series: int, days: int, step: float, end: float, kind: str, points: int | None = None
) -> int:
    """Store the data through insert_columns, a day of all series at a time.

    With ``points``, as runs: every hour counts as fresh, as it did when a live sender sent
    it, in batches of that many points a series.
    """
    from correlator.store.tsdb import write

    rng = np.random.default_rng(7)
    sids = bench_series(engine, n_series)
    total = 0
    fresh_cut = write.late_cut
    if points:
        write.late_cut = lambda now=None: -(2**40)  # every hour fresh: runs, as live
    for d in range(days, 0, -1):
        ts = np.arange(end - d * DAY, end - (d - 1) * DAY, step)
        total += store_span(engine, sids, ts, kind, rng, points)
        print(f"  stored day {days - d + 1}/{days}", file=sys.stderr, end="\r", flush=True)
    write.late_cut = fresh_cut
    print(file=sys.stderr)
    return total


def bytes_at_rest(engine, tables: tuple[str, ...]) -> int:
    """Return the bytes of these tables with their indexes (and partitions)."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            return sum(
                int(
                    conn.exec_driver_sql(
                        "SELECT COALESCE(SUM(pg_total_relation_size(relid)), 0) "
                        f"FROM pg_partition_tree('{t}') WHERE isleaf"
                    ).scalar()
                    or conn.exec_driver_sql(f"SELECT pg_total_relation_size('{t}')").scalar()
                )
                for t in tables
            )
        names = conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE tbl_name IN "
            f"({','.join(repr(t) for t in tables)})"
        ).scalars()
        wanted = set(names)
        rows = conn.exec_driver_sql("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").all()
        return sum(size for name, size in rows if name in wanted)


def vacuum(engine, full: bool = False) -> None:
    """Let the engine reuse freed pages (PostgreSQL: plain VACUUM, or FULL to shrink files)."""
    if engine.dialect.name == "postgresql":  # its own connection: VACUUM needs autocommit
        url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(url, autocommit=True) as conn:
            tables = "samples, sample_runs, sample_chunks, samples_1m"
            conn.execute(f"VACUUM {'FULL ' if full else ''}{tables}")
        return
    raw = engine.raw_connection()
    try:
        raw.driver_connection.execute("VACUUM")
    finally:
        raw.close()


def read_times(engine, n_series: int, end: float, repeats: int = 5) -> dict:
    """Return the median seconds of 24 h reads of n_series at the board's step and raw."""
    from correlator.store.tsdb.read import read_range

    ids = list(range(1, n_series + 1))
    out = {}
    for label, step in (("board step 180 s", 180.0), ("no step", None)):
        times, points = [], 0
        for _ in range(repeats):
            began = time.perf_counter()
            with engine.connect() as conn:
                data = read_range(conn=conn, series_ids=ids, start=end - DAY, end=end, step=step)
            times.append(time.perf_counter() - began)
            points = sum(len(d.ts) for d in data.values())
        out[label] = (float(np.median(times)), points)
    return out


def scratch_store(engine_name: str, folder: str) -> tuple[str, str | None]:
    """Return the URL of an empty store and its PostgreSQL database's name (SQLite: None)."""
    from correlator.store.engine import with_driver

    if engine_name != "postgresql":
        return f"sqlite:///{Path(folder) / 'bench.db'}", None
    name, url = pg_database()
    return with_driver(url), name


def run(engine_name: str, args) -> None:
    """Measure one engine."""
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade
    from correlator.store.tsdb.compaction import GROUP_ROWS, compact
    from correlator.store.tsdb.rollups import roll_up

    end = time.time() - 7200
    with tempfile.TemporaryDirectory() as folder:
        url, name = scratch_store(engine_name, folder)
        engine = make_engine(url)  # the store's own settings (SQLite pragmas)
        try:
            upgrade(engine)
            began = time.perf_counter()
            n = fill(engine, args.series, args.days, args.step, end, args.values, args.runs)
            stored_s = time.perf_counter() - began
            roll_up(engine=engine, max_hours=args.days * 24 + 2)
            vacuum(engine)
            raw_bytes = bytes_at_rest(engine, ("samples", "sample_runs"))
            rollup_bytes = bytes_at_rest(engine, ("samples_1m",))
            reads_raw = read_times(engine, min(args.read_series, args.series), end)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            report = compact(
                engine=engine,
                head_seconds=3600,
                max_hours=10**9,
                group_rows=1 if args.hourly else GROUP_ROWS,
            )
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            vacuum(engine)
            after = bytes_at_rest(engine, ("samples", "sample_runs", "sample_chunks"))
            rollups_after = bytes_at_rest(engine, ("samples_1m",))
            vacuum(engine, full=True)
            live = bytes_at_rest(engine, ("samples", "sample_runs", "sample_chunks"))
            rollups_live = bytes_at_rest(engine, ("samples_1m",))
            reads_chunks = read_times(engine, min(args.read_series, args.series), end)
        finally:
            engine.dispose()
            if name:
                drop_pg(name)
    per_m = cpu / max(report.samples, 1) * 1e6
    print(
        f"\n{engine_name}: {n:,} samples ({args.series} series x {args.days} d, "
        f"step {args.step:g} s, values {args.values}{', hourly' if args.hourly else ''}"
        f"{f', runs of {args.runs}' if args.runs else ''}), "
        f"stored in {stored_s:.0f} s"
    )
    print(f"  raw at rest:        {raw_bytes / n:6.2f} bytes/sample ({raw_bytes / 1e6:,.1f} MB)")
    print(f"  compacted at rest:  {after / n:6.2f} bytes/sample ({after / 1e6:,.1f} MB)")
    print(f"  after VACUUM FULL:  {live / n:6.2f} bytes/sample (the live rows; SQLite: the same)")
    print(
        f"  1-minute rollups:   {rollup_bytes / n:6.2f} bytes/sample besides before, "
        f"{rollups_after / n:.2f} after (compacted hours drop theirs), "
        f"{rollups_live / n:.2f} after VACUUM FULL"
    )
    print(
        f"  compaction: {report.samples:,} samples, {report.chunks:,} chunk writes, {wall:.1f} s: "
        f"{report.samples / max(wall, 1e-9):,.0f} samples/s, {per_m:.2f} CPU s per million; "
        f"a fleet at {args.fleet_rate:,} samples/s needs "
        f"{args.fleet_rate * per_m / 1e6:.1%} of one core"
    )
    for label in reads_raw:
        (t0, p0), (t1, p1) = reads_raw[label], reads_chunks[label]
        print(
            f"  24 h x {min(args.read_series, args.series)} series, {label}: "
            f"raw {t0 * 1000:.0f} ms ({p0:,} points), compacted {t1 * 1000:.0f} ms ({p1:,})"
        )


def store_arguments(doc: str, *, series: int, days: int, step: float) -> argparse.ArgumentParser:
    """Return a parser with the engines, the stored data's shape and the series read."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--engines", default="sqlite,postgresql")
    ap.add_argument("--series", type=int, default=series)
    ap.add_argument("--days", type=int, default=days)
    ap.add_argument("--step", type=float, default=step, help="seconds between samples")
    ap.add_argument("--read-series", type=int, default=130)
    return ap


def main() -> None:
    """Parse arguments and measure each engine."""
    ap = store_arguments(__doc__, series=1000, days=30, step=300.0)
    ap.add_argument("--values", choices=("mixed", "smooth"), default="mixed")
    ap.add_argument("--fleet-rate", type=int, default=20_000, help="samples/s of a fleet")
    ap.add_argument(
        "--hourly",
        action="store_true",
        help="compact one hour a transaction, as the service's passes do in steady state "
        "(default: as `causeline db compact` converts a store, up to a day at once)",
    )
    ap.add_argument(
        "--runs",
        type=int,
        metavar="POINTS",
        help="store the data as runs, as a live sender sending POINTS points a series a batch "
        "(default: keyed rows, as an import of history)",
    )
    args = ap.parse_args()
    for engine_name in args.engines.split(","):
        run(engine_name, args)


if __name__ == "__main__":
    main()
