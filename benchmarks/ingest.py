"""Ingest throughput: end to end through a real server against the engine's raw bulk path.

For each engine it starts ``causeline serve`` (uvicorn on loopback), sends batches of
10,000 samples over many series, samples the server's RSS while it ingests, and in the
same run writes the same rows with the driver's plain bulk path into an unindexed table
(sqlite3 executemany; PostgreSQL COPY). It prints samples/s end to end, raw rows/s,
their ratio and the server's RSS over the run.

    python benchmarks/ingest.py --samples 5000000
    python benchmarks/ingest.py --engines sqlite --samples 1000000
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import orjson
import psutil
import psycopg

PG_ADMIN = os.environ.get("CAUSELINE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
T0 = 1_700_000_000.0


def make_bodies(n_samples: int, per_batch: int, n_series: int, points: int) -> list[bytes]:
    """Return encoded batches: each covers per_batch // points series, ``points`` steps each."""
    per_series = per_batch // points
    bodies, sent, step = [], 0, 0
    while sent < n_samples:
        first = (step * per_series) % n_series
        window = (step * per_series) // n_series
        series = []
        for i in range(per_series):
            sid = (first + i) % n_series
            ts = [T0 + 15.0 * (window * points + k) for k in range(points)]
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
    """Return rows/s of sqlite3 executemany into an unindexed table."""
    conn = sqlite3.connect(folder / "raw.db")
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


def end_to_end(bodies: list[bytes], url: str, clients: int) -> dict:
    """Serve on a fresh database, send every body, return the rate and RSS trace."""
    env = os.environ | {"CAUSELINE_DATABASE_URL": url}
    cli("db", "upgrade", env=env)
    token = cli("token", "create", "bench", env=env)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "causeline.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{base}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        proc = psutil.Process(server.pid)
        rss: list[float] = []
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                rss.append(proc.memory_info().rss / 2**20)
                time.sleep(0.2)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

        def send(chunk: list[bytes]) -> int:
            with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
                total = 0
                for body in chunk:
                    resp = client.post("/api/v1/ingest", content=body)
                    resp.raise_for_status()
                    total += resp.json()["inserted"]
                return total

        start = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            inserted = sum(pool.map(send, [bodies[i::clients] for i in range(clients)]))
        elapsed = time.perf_counter() - start
        done.set()
        watcher.join()
    finally:
        server.terminate()
        server.wait(timeout=30)
    quarter = max(1, len(rss) // 4)
    return {
        "rate": inserted / elapsed,
        "inserted": inserted,
        "seconds": elapsed,
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
    args = ap.parse_args()
    bodies = make_bodies(args.samples, args.batch, args.series, args.points)
    rows = rows_of(bodies)
    print(
        f"{len(bodies)} batches, {len(rows):,} samples over {args.series:,} series, "
        f"{args.clients} clients"
    )
    for engine in args.engines.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            if engine == "sqlite":
                e2e = end_to_end(bodies, f"sqlite:///{tmp}/bench.db", args.clients)
                raw = raw_sqlite(rows, Path(tmp))
            else:
                name, url = pg_database()
                raw_name, raw_url = pg_database()
                try:
                    e2e = end_to_end(
                        bodies, url.replace("postgresql://", "postgresql+psycopg://"), args.clients
                    )
                    raw = raw_postgres(rows, raw_url)
                finally:
                    drop_pg(name)
                    drop_pg(raw_name)
        trace = " -> ".join(f"{r:.0f}" for r in e2e["rss_trace"])
        print(
            f"{engine:10s} end-to-end {e2e['rate']:>10,.0f} samples/s "
            f"({e2e['inserted']:,} in {e2e['seconds']:.1f} s) | raw {raw:>10,.0f} rows/s | "
            f"ratio {e2e['rate'] / raw:.2f} | server RSS peak {e2e['rss_peak']:.0f} MiB "
            f"(over the run: {trace})"
        )


if __name__ == "__main__":
    main()
