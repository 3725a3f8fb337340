"""Small helpers shared by test modules."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token

# Headless Chromium as the tests and benchmarks run it; without the background-networking
# flags it keeps trying hosts this machine cannot reach.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1400,1000",
)


@contextmanager
def engine_at(db_url: str, revision: str) -> Iterator[Engine]:
    """Yield an engine on a database migrated only up to ``revision``; dispose of it after."""
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade

    engine = make_engine(db_url)
    try:
        upgrade(engine, revision)
        yield engine
    finally:
        engine.dispose()


def poll(predicate, timeout: float, interval: float = 0.05):
    """Return the first truthy answer of ``predicate`` within ``timeout`` seconds, else None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(interval)
    return None


def unlabelled_samples(exposition: str) -> dict[str, float]:
    """Return each unlabelled sample of a Prometheus text exposition by its name."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        s.name: s.value
        for family in text_string_to_metric_families(exposition)
        for s in family.samples
        if not s.labels
    }


def free_port() -> int:
    """Return a free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(base: str, proc: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    """Wait until ``causeline serve`` at base answers /readyz; fail with its log if it cannot."""
    import httpx

    deadline = time.monotonic() + timeout  # a cold start on a loaded machine takes seconds
    while True:
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        ended = proc.poll() is not None
        if ended or time.monotonic() > deadline:
            what = "exited" if ended else f"was not ready in {timeout:g} s"
            raise AssertionError(f"causeline serve {what}: {log.read_text()[-2000:]}")
        time.sleep(0.2)


def count_rows(engine: Engine, table: str = "samples") -> int:
    """Return the number of rows in a table."""
    with engine.connect() as conn:
        return conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()


def make_batch(
    n_series: int = 3,
    n_points: int = 5,
    t0: float = 1_700_000_000.0,
    step: float = 15.0,
    name: str = "gpu_utilization_percent",
) -> dict:
    """Return a wire-form batch of deterministic samples."""
    return {
        "series": [
            {
                "name": name,
                "labels": {"host": f"h{i}", "gpu": "0"},
                "timestamps": [t0 + k * step for k in range(n_points)],
                "values": [float(i * 100 + k) for k in range(n_points)],
            }
            for i in range(n_series)
        ]
    }


def store_series(engine: Engine, n: int) -> list[int]:
    """Create series m0..m{n-1} (label i) and return their ids in that order."""
    from correlator.store.engine import write_transaction
    from correlator.store.tsdb.series import ensure_series

    with write_transaction(engine) as conn:
        ids = ensure_series(conn=conn, items={f"k{i}": (f"m{i}", {"i": str(i)}) for i in range(n)})
    return [ids[f"k{i}"] for i in range(n)]


def insert_samples(engine: Engine, ids, ts, values) -> int:
    """Insert samples of several series (parallel lists) in one transaction; return new ones."""
    from correlator.store.engine import write_transaction
    from correlator.store.tsdb.write import insert_columns, sample_columns

    with write_transaction(engine) as conn:
        return insert_columns(conn=conn, cols=sample_columns(ids, ts, values))


def read_samples(engine: Engine, ids, start: float, end: float, step: float | None = None):
    """Return ``read_range`` of these series over [start, end]."""
    from correlator.store.tsdb.read import read_range

    with engine.connect() as conn:
        return read_range(conn=conn, series_ids=ids, start=start, end=end, step=step)


def p99_sla(
    model: str = "m", *, threshold: float = 50, for_seconds: float = 60, name: str = ""
) -> dict:
    """Return an SLA on a model's p99 latency: above ``threshold`` ms for ``for_seconds``."""
    return {
        "name": name or f"{model} p99",
        "metric": "model_latency_p99_ms",
        "labels": {"model": model},
        "aggregate": "max",
        "op": ">",
        "threshold": threshold,
        "for_seconds": for_seconds,
    }


# The SLA the live source tests breach: model m1's p99 latency above 100 ms for 60 s.
M1_LATENCY_SLA = p99_sla("m1", threshold=100.0, name="m1 p99 latency")


def admin_client(engine: Engine) -> TestClient:
    """Return a client of the service over ``engine`` with an admin token, background work off.

    Server errors come back as 500 answers (not raised), as a user would see them.
    """
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name=f"admin-{time.monotonic_ns()}", scope="admin")
    settings = ServiceSettings(
        database_url=str(engine.url),
        evaluator_enabled=False,
        alert_worker_enabled=False,
        retention_enabled=False,
        rollup_enabled=False,
        compaction_enabled=False,
    )
    client = TestClient(create_app(settings, engine=engine), raise_server_exceptions=False)
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def field_of(resp) -> set[str]:
    """Return the fields a 422 names."""
    return {str(d["loc"][-1]) for d in resp.json()["detail"]} | {
        str(d.get("field")) for d in resp.json()["detail"] if d.get("field")
    }
