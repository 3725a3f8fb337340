"""Ingest throughput: end to end through a real server against the engine's raw bulk path.

For each engine it starts ``causeline serve`` (uvicorn on loopback), sends batches of
10,000 samples over many series, samples the server's RSS while it ingests, and in the
same run writes the same rows with the driver's plain bulk path into an unindexed table
(sqlite3 executemany; PostgreSQL COPY). It prints samples/s end to end, raw rows/s,
their ratio and the server's RSS over the run.

    python benchmarks/ingest.py --samples 5000000
    python benchmarks/ingest.py --engines sqlite --samples 1000000

Each batch holds ``--points`` (20) consecutive points of each of its series. The agent
sends one point a series every 10 s, as remote write and OTLP exporters mostly do:
``--points 1`` measures that shape, where the per-series work sets the rate.

``--ceiling`` also serves each engine through ``serve_head.py none``, which counts sample
rows without writing them: the rate of the request path alone (body, validation, series,
transaction), the most any layout of the samples could reach. The first batches create
every series, so runs of fewer than a few million samples mostly measure that.

``--store`` also writes the same batches through the store's own ``insert_columns`` in
this process, with no service: the most the store's write path (runs of fresh points, keyed
rows for the rest) gives on this yardstick, whatever the request path does.

``--scale`` runs PostgreSQL at scale instead: end-to-end samples/s through two
``causeline serve`` processes (clients split across them) against raw COPY into an
unindexed table in the same run, then the latency of ``read_range`` for 1,000 series
over 24 h with ``--days`` (30) of data stored, generated with COPY straight into the
partitioned ``samples`` table (``--step`` seconds apart; 15 is the full size).

    python benchmarks/ingest.py --scale --samples 2000000 --step 300
    python benchmarks/ingest.py --scale --samples 5000000 --step 15 --explain
"""

from __future__ import annotations

import argparse
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import httpx
import orjson
import psutil
import psycopg

PG_ADMIN = os.environ.get("CAUSELINE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
SERVE = ("-m", "causeline.cli")
SERVE_HEAD = str(Path(__file__).with_name("serve_head.py"))  # serves with another head


def make_bodies(n_samples: int, per_batch: int, n_series: int, points: int) -> list[bytes]:
    """Return encoded batches: each covers per_batch // points series, ``points`` steps each.

    The samples begin at the next hour: ingest takes them as fresh, as an agent's (samples
    of an hour that ended go the late path), and no rollup or compaction pass touches them
    while the run lasts.
    """
    t0 = (time.time() // 3600 + 1) * 3600
    per_series = per_batch // points
    bodies, sent, step = [], 0, 0
    while sent < n_samples:
        first = (step * per_series) % n_series
        window = (step * per_series) // n_series
        series = []
        for i in range(per_series):
            sid = (first + i) % n_series
            ts = [t0 + 15.0 * (window * points + k) for k in range(points)]
            series.append(
                {
                    "name": f"bench_metric_{sid % 50}",
                    "labels": {"host": f"node-{sid // 50}", "gpu": str(sid % 8)},
                    "timestamps": ts,
                    "values": [float(sid + k) for k in range(points)],
                }
            )
        bodies.append(orjson.dumps({"series": series}))
        sent += per_series * points
        step += 1
    return bodies


def rows_of(bodies: list[bytes]) -> list[tuple[int, int, float]]:
    """Return the (series number, ms, value) rows the bodies carry, for the raw path."""
    keys: dict[tuple, int] = {}
    rows = []
    for body in bodies:
        for s in orjson.loads(body)["series"]:
            sid = keys.setdefault((s["name"], s["labels"]["host"], s["labels"]["gpu"]), len(keys))
            rows.extend(
                (sid, round(t * 1000), v) for t, v in zip(s["timestamps"], s["values"], strict=True)
            )
    return rows


def raw_sqlite(rows, folder: Path) -> float:
    """Return rows/s of sqlite3 executemany into an unindexed table, with the store's pages."""
    from correlator.store.engine import SQLITE_PAGE_SIZE

    conn = sqlite3.connect(folder / "raw.db")
    conn.execute(f"PRAGMA page_size={SQLITE_PAGE_SIZE}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE raw (series_id INTEGER, ts INTEGER, value REAL)")
    start = time.perf_counter()
    for i in range(0, len(rows), 10_000):
        with conn:
            conn.executemany("INSERT INTO raw VALUES (?, ?, ?)", rows[i : i + 10_000])
    elapsed = time.perf_counter() - start
    conn.close()
    return len(rows) / elapsed


def raw_postgres(rows, url: str) -> float:
    """Return rows/s of COPY into an unindexed table."""
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE raw (series_id int4, ts int8, value float8)")
        conn.commit()
        start = time.perf_counter()
        for i in range(0, len(rows), 10_000):
            with conn.cursor() as cur, cur.copy("COPY raw FROM STDIN") as copy:
                for row in rows[i : i + 10_000]:
                    copy.write_row(row)
            conn.commit()
        return len(rows) / (time.perf_counter() - start)


def free_port() -> int:
    """Return a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(base: str, tries: int = 600) -> None:
    """Wait until a server at ``base`` answers /readyz with 200 (at most ``tries`` x 50 ms)."""
    for _ in range(tries):
        try:
            if httpx.get(f"{base}/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)


def cli(*args: str, env: dict) -> str:
    """Run the causeline command and return its stdout."""
    out = subprocess.run(
        [sys.executable, "-m", "causeline.cli", *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def end_to_end(
    bodies: list[bytes], url: str, clients: int, servers: int = 1, entry: tuple = SERVE
) -> dict:
    """Serve on a fresh database, send every body, return the rate and RSS trace.

    With several servers, client i talks to server i % servers (a load balancer's split).
    ``entry`` is the server's command after the interpreter (``serve_head.py`` and a head).
    """
    env = os.environ | {"CAUSELINE_DATABASE_URL": url}
    cli("db", "upgrade", env=env)
    token = cli("token", "create", "bench", env=env)
    ports = [free_port() for _ in range(servers)]
    procs = [
        subprocess.Popen(
            [sys.executable, *entry, "serve", "--port", str(port), "--no-alerts"],
            env=env,
            stdout=subprocess.DEVNULL,
        )
        for port in ports
    ]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        for base in bases:
            wait_ready(base, tries=400)
        proc = psutil.Process(procs[0].pid)
        rss: list[float] = []
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                rss.append(proc.memory_info().rss / 2**20)
                time.sleep(0.2)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

        def send(job: tuple[str, list[bytes]]) -> int:
            base, chunk = job
            with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
                total = 0
                for body in chunk:
                    resp = client.post("/api/v1/ingest", content=body)
                    resp.raise_for_status()
                    total += resp.json()["inserted"]
                return total

        server_procs = [psutil.Process(p.pid) for p in procs]
        cpu_before = sum(sum(p.cpu_times()[:2]) for p in server_procs)
        start = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            jobs = [(bases[i % servers], bodies[i::clients]) for i in range(clients)]
            inserted = sum(pool.map(send, jobs))
        elapsed = time.perf_counter() - start
        server_cpu = sum(sum(p.cpu_times()[:2]) for p in server_procs) - cpu_before
        done.set()
        watcher.join()
    finally:
        for server in procs:
            server.terminate()
            server.wait(timeout=30)
    quarter = max(1, len(rss) // 4)
    return {
        "rate": inserted / elapsed,
        "inserted": inserted,
        "seconds": elapsed,
        "server_cpu_us": server_cpu / max(inserted, 1) * 1e6,
        "rss_peak": max(rss),
        "rss_trace": [rss[min(i * quarter, len(rss) - 1)] for i in range(5)],
    }


def pg_database() -> tuple[str, str]:
    """Create a scratch PostgreSQL database and return (name, SQLAlchemy URL)."""
    name = f"causeline_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0]
    return name, f"{base}/{name}"


def drop_pg(name: str) -> None:
    """Drop a scratch PostgreSQL database."""
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def fill_days(url: str, n_series: int, days: int, step: float, end: float) -> int:
    """COPY ``days`` of samples of ``n_series`` series straight into samples; return rows."""
    import numpy as np
    from sqlalchemy import create_engine

    from correlator.store.engine import write_transaction
    from correlator.store.tsdb.partitions import ensure_partitions

    engine = create_engine(url)
    with write_transaction(engine) as conn:
        ensure_partitions(conn=conn, start=end - days * 86_400, end=end)
    engine.dispose()
    total = 0
    ids = np.arange(1, n_series + 1)
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        for d in range(days, 0, -1):
            start = end - d * 86_400
            ts = np.rint(np.arange(start, start + 86_400, step) * 1000).astype(np.int64)
            hours = ts // 3_600_000
            lines = []
            for sid in ids.tolist():
                vals = (sid + np.sin(ts / 6e5)).tolist()
                lines.extend(
                    f"{h}\t{sid}\t{t}\t{v!r}\n"
                    for h, t, v in zip(hours.tolist(), ts.tolist(), vals, strict=True)
                )
            with conn.cursor() as cur, cur.copy("COPY samples FROM STDIN") as copy:
                copy.write("".join(lines))
            conn.commit()
            total += len(lines)
    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE samples")
    return total


def range_latency(url: str, n_series: int, end: float, repeats: int, explain: bool) -> dict:
    """Time read_range of every series over the last 24 h; optionally print the plan."""
    from sqlalchemy import create_engine

    from correlator.store.tsdb.read import read_range

    engine = create_engine(url)
    times, points = [], 0
    with engine.connect() as conn:
        for _ in range(repeats):
            t = time.perf_counter()
            got = read_range(
                conn=conn, series_ids=range(1, n_series + 1), start=end - 86_400, end=end
            )
            times.append(time.perf_counter() - t)
            points = sum(len(s.ts) for s in got.values())
        if explain:
            lo, hi = round((end - 86_400) * 1000), round(end * 1000)
            hours = list(range(lo // 3_600_000, hi // 3_600_000 + 1))
            raw = conn.connection.driver_connection
            with raw.cursor() as cur:
                for label, sql, params in (
                    (
                        "range query (read_range, 1,000 series x 24 h)",
                        "SELECT series_id, ts, value FROM samples WHERE hour = ANY(%s) "
                        "AND series_id = ANY(%s) AND ts >= %s AND ts <= %s",
                        (hours, list(range(1, n_series + 1)), lo, hi),
                    ),
                    (
                        "time_bounds (first hour)",
                        "SELECT MIN(ts) FROM samples WHERE hour = (SELECT MIN(hour) FROM samples)",
                        None,
                    ),
                ):
                    cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                    print(f"\n-- {label}")
                    print("\n".join(r[0] for r in cur.fetchall()))
    engine.dispose()
    times.sort()
    return {
        "first": times[0] if repeats == 1 else times[-1],
        "median": times[len(times) // 2],
        "points": points,
    }


def scale(args, bodies: list[bytes], rows) -> None:
    """PostgreSQL at scale: two services against raw COPY, then range-query latency."""
    name, url = pg_database()
    raw_name, raw_url = pg_database()
    sa_url = url.replace("postgresql://", "postgresql+psycopg://")
    try:
        e2e = end_to_end(bodies, sa_url, args.clients, servers=2)
        raw = raw_postgres(rows, raw_url)
        print(
            f"postgresql x2 services end-to-end {e2e['rate']:>10,.0f} samples/s "
            f"({e2e['inserted']:,} in {e2e['seconds']:.1f} s, {args.clients} clients) | "
            f"raw COPY {raw:>10,.0f} rows/s | ratio {e2e['rate'] / raw:.2f}"
        )
    finally:
        drop_pg(name)
        drop_pg(raw_name)
    name, url = pg_database()
    sa_url = url.replace("postgresql://", "postgresql+psycopg://")
    try:
        cli("db", "upgrade", env=os.environ | {"CAUSELINE_DATABASE_URL": sa_url})
        end = float(int(time.time()) // 60 * 60)
        t = time.perf_counter()
        stored = fill_days(sa_url, args.range_series, args.days, args.step, end)
        fill = time.perf_counter() - t
        lat = range_latency(sa_url, args.range_series, end, args.repeats, args.explain)
        print(
            f"range query: {args.range_series:,} series x 24 h with {args.days} days stored "
            f"({stored:,} rows every {args.step:g} s, COPY in {fill:.0f} s): "
            f"{lat['points']:,} points, first {lat['first'] * 1000:.0f} ms, "
            f"median {lat['median'] * 1000:.0f} ms over {args.repeats} runs"
        )
    finally:
        drop_pg(name)


def main() -> None:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--samples", type=int, default=5_000_000)
    ap.add_argument("--batch", type=int, default=10_000, help="samples per batch")
    ap.add_argument("--series", type=int, default=20_000, help="distinct series")
    ap.add_argument("--points", type=int, default=20, help="points per series per batch")
    ap.add_argument("--clients", type=int, default=2, help="concurrent client connections")
    ap.add_argument("--engines", default="sqlite,postgresql")
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="also serve with sample rows counted but not written (serve_head.py none)",
    )
    ap.add_argument(
        "--store",
        action="store_true",
        help="also write the same batches through the store's insert_columns, no service",
    )
    ap.add_argument("--scale", action="store_true", help="PostgreSQL at scale (see above)")
    ap.add_argument("--days", type=int, default=30, help="--scale: days stored")
    ap.add_argument("--step", type=float, default=300.0, help="--scale: seconds between samples")
    ap.add_argument("--range-series", type=int, default=1000, help="--scale: series read")
    ap.add_argument("--repeats", type=int, default=5, help="--scale: range queries timed")
    ap.add_argument("--explain", action="store_true", help="--scale: print EXPLAIN ANALYZE")
    args = ap.parse_args()
    bodies = make_bodies(args.samples, args.batch, args.series, args.points)
    rows = rows_of(bodies)
    print(
        f"{len(bodies)} batches, {len(rows):,} samples over {args.series:,} series, "
        f"{args.clients} clients"
    )
    if args.scale:
        scale(args, bodies, rows)
        return
    extras: dict[str, Callable[[str], dict]] = {}
    if args.ceiling:
        extras["ceiling"] = partial(served, bodies, args.clients, "none")
    if args.store:
        extras["store"] = partial(store_only, rows, args.batch)
    for engine in args.engines.split(","):
        e2e, raw, other = run_engine(engine, bodies, rows, args.clients, extras)
        trace = " -> ".join(f"{r:.0f}" for r in e2e["rss_trace"])
        print(
            f"{engine:10s} end-to-end {e2e['rate']:>10,.0f} samples/s "
            f"({e2e['inserted']:,} in {e2e['seconds']:.1f} s) | raw {raw:>10,.0f} rows/s | "
            f"ratio {e2e['rate'] / raw:.2f} | server CPU {e2e['server_cpu_us']:.2f} us/sample "
            f"(raw {1e6 / raw:.2f} us/row) | server RSS peak {e2e['rss_peak']:.0f} MiB "
            f"(over the run: {trace})"
        )
        for label, what in (
            ("ceiling", "no sample rows written"),
            ("store", "the store's insert_columns in process, no service"),
        ):
            if label in other:
                got = other[label]
                print(
                    f"{engine:10s} {label:10s} {got['rate']:>10,.0f} samples/s with {what} | "
                    f"ratio {got['rate'] / raw:.2f} of raw | end-to-end is "
                    f"{e2e['rate'] / got['rate']:.2f} of it | "
                    f"{'process' if label == 'store' else 'server'} CPU "
                    f"{got['server_cpu_us']:.2f} us/sample"
                )


def served(bodies: list[bytes], clients: int, head: str, url: str) -> dict:
    """Return end to end through ``serve_head.py`` with that head, on a fresh store at url."""
    return end_to_end(bodies, url, clients, entry=(SERVE_HEAD, head))


def store_only(rows, batch: int, url: str) -> dict:
    """Return the rate of the store's own write path: ``insert_columns``, a transaction a batch.

    The same rows as the other paths, in the same batches sorted by key as ``store_batch``
    sorts them, written in this process with no service in front (series rows are not made;
    nothing reads them). Its CPU is this process's (PostgreSQL's own is not counted).
    """
    import numpy as np

    from correlator.store.engine import make_engine, write_transaction
    from correlator.store.tsdb.write import insert_columns, sample_columns

    cli("db", "upgrade", env=os.environ | {"CAUSELINE_DATABASE_URL": url})
    batches = []
    for i in range(0, len(rows), batch):
        part = np.array(rows[i : i + batch], dtype=np.float64)
        sids = part[:, 0].astype(np.int64) + 1
        starts = np.flatnonzero(np.r_[True, sids[1:] != sids[:-1]])
        runs = list(zip(starts, np.r_[starts[1:], len(part)], strict=True))
        batches.append(
            sample_columns(
                sids[starts].tolist(),
                [part[a:b, 1] / 1000 for a, b in runs],
                [part[a:b, 2] for a, b in runs],
            )
        )
    engine = make_engine(url)
    cpu, start = time.process_time(), time.perf_counter()
    for cols in batches:
        with write_transaction(engine) as conn:
            insert_columns(conn=conn, cols=cols)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    engine.dispose()
    return {"rate": len(rows) / elapsed, "server_cpu_us": cpu / len(rows) * 1e6}


def run_engine(
    engine: str, bodies, rows, clients: int, extras: dict[str, Callable[[str], dict]]
) -> tuple:
    """Return (end to end, raw rows/s, {label: that extra's figures on its own fresh store})."""
    if engine == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            e2e = end_to_end(bodies, f"sqlite:///{tmp}/bench.db", clients)
            raw = raw_sqlite(rows, Path(tmp))
            other = {label: run(f"sqlite:///{tmp}/{label}.db") for label, run in extras.items()}
            return e2e, raw, other
    names = [pg_database() for _ in range(2 + len(extras))]
    urls = [url.replace("postgresql://", "postgresql+psycopg://") for _, url in names]
    try:
        e2e = end_to_end(bodies, urls[0], clients)
        raw = raw_postgres(rows, names[1][1])
        other = {
            label: run(url) for (label, run), url in zip(extras.items(), urls[2:], strict=True)
        }
        return e2e, raw, other
    finally:
        for name, _ in names:
            drop_pg(name)


if __name__ == "__main__":
    main()
