"""Two real service processes on one PostgreSQL: ingest, evaluator lease failover, incidents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.alerts.receiver import Receiver
from tests.conftest import _create_pg_database, _drop_pg_database, require_postgres
from tests.helpers import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "causeline.cli"]
LEASE_S = 3.0
INTERVAL_S = 0.5
SLA = {
    "name": "fleet p99",
    "metric": "model_latency_p99_ms",
    "labels": {"model": "fleet"},
    "op": ">",
    "threshold": 50,
    "for_seconds": 60,
    "severity": "critical",
}


def _cli(*args: str) -> str:
    done = subprocess.run(CLI + list(args), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Start two ``causeline serve`` processes on one fresh PostgreSQL database."""
    require_postgres()
    name, url = _create_pg_database()
    tmp = tmp_path_factory.mktemp("fleet")
    procs: list[subprocess.Popen] = []
    receiver = None
    try:
        _cli("db", "upgrade", "--database-url", url)
        token = _cli("token", "create", "fleet", "--scope", "write", "--database-url", url)
        receiver = Receiver().start()
        routes = {"channels": [{"name": "hook", "kind": "webhook", "url": receiver.url}]}
        env = os.environ | {
            "CAUSELINE_LEASE_SECONDS": str(LEASE_S),
            "CAUSELINE_EVALUATOR_INTERVAL_SECONDS": str(INTERVAL_S),
            "CAUSELINE_ALERT_ROUTES_JSON": json.dumps(routes),
            "CAUSELINE_ALERT_WORKER_INTERVAL_SECONDS": str(INTERVAL_S),
        }
        bases = []
        for i in range(2):
            port = free_port()
            with open(tmp / f"serve{i}.log", "w") as log:
                procs.append(
                    subprocess.Popen(
                        [*CLI, "serve", "--port", str(port), "--database-url", url],
                        cwd=ROOT,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
            bases.append(f"http://127.0.0.1:{port}")
        for k, base in enumerate(bases):
            wait_ready(base, procs[k], tmp / f"serve{k}.log")
        clients = [
            httpx.Client(base_url=b, headers={"Authorization": f"Bearer {token}"}, timeout=60)
            for b in bases
        ]
        yield {"url": url, "procs": procs, "clients": clients, "receiver": receiver}
        for c in clients:
            c.close()
    finally:
        if receiver is not None:
            receiver.stop()
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        _drop_pg_database(name)


def _sql(url: str, query: str):
    import psycopg

    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        return conn.execute(query).fetchall()


def _batch(first: int, n_series: int, t0: float, points: int) -> dict:
    return {
        "series": [
            {
                "name": "fleet_load",
                "labels": {"host": f"h{s}"},
                "timestamps": [t0 + 10.0 * k for k in range(points)],
                "values": [float(s * 1000 + k) for k in range(points)],
            }
            for s in range(first, first + n_series)
        ]
    }


def test_concurrent_ingest_through_both_stores_every_sample_once(fleet):
    t0 = time.time() - 3 * 86_400  # three days back: partitions are made for incoming days
    # 4 clients (2 per service); each batch overlaps its neighbour by half, and all replay.
    batches = [_batch(first=20 * i, n_series=40, t0=t0, points=300) for i in range(12)]
    jobs = [(fleet["clients"][j % 2], b) for j, b in enumerate(batches + batches[::-1])]

    def send(job) -> int:
        client, body = job
        resp = client.post("/api/v1/ingest", json=body)
        assert resp.status_code == 200, resp.text
        return resp.json()["inserted"]

    with ThreadPoolExecutor(4) as pool:
        inserted = sum(pool.map(send, jobs))
    distinct = (20 * 11 + 40) * 300
    stored = _sql(fleet["url"], "SELECT COUNT(*), COUNT(DISTINCT (series_id, ts)) FROM samples")
    assert stored[0] == (distinct, distinct)
    assert inserted == distinct
    default = _sql(fleet["url"], "SELECT COUNT(*) FROM samples_default")[0][0]
    assert default == 0


def _holder(url: str) -> str | None:
    rows = _sql(
        url,
        "SELECT holder FROM leases WHERE name = 'sla-evaluator' "
        "AND expires_at > (extract(epoch from now()) * 1000)::bigint",
    )
    return rows[0][0] if rows else None


def _wait_holder(url: str, timeout: float, not_pid: int | None = None) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holder = _holder(url)
        if holder:
            pid = int(holder.split(":")[1])
            if pid != not_pid:
                return pid
        time.sleep(0.1)
    raise AssertionError(f"no other evaluator took the lease within {timeout} s")


def test_one_incident_per_breach_then_lease_failover_on_sigkill(fleet):
    a, b = fleet["clients"]
    assert a.post("/api/v1/slas", json=SLA).status_code in (200, 201)
    now = time.time()
    t0 = now - 15 * 29
    values = [20.0] * 20 + [90.0] * 10
    for client, instance in ((a, "i-0"), (b, "i-1")):
        body = {
            "series": [
                {
                    "name": "model_latency_p99_ms",
                    "labels": {"model": "fleet", "instance": instance},
                    "timestamps": [t0 + 15 * k for k in range(30)],
                    "values": values,
                }
            ]
        }
        assert client.post("/api/v1/ingest", json=body).status_code == 200
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not a.get("/api/v1/incidents").json():
        time.sleep(0.2)
    time.sleep(6 * INTERVAL_S)  # both evaluators keep running: still one incident
    incidents = b.get("/api/v1/incidents").json()
    assert len(incidents) == 1 and incidents[0]["sla"] == SLA["name"]
    assert _sql(fleet["url"], "SELECT COUNT(*) FROM incidents")[0][0] == 1
    # Both processes run an alert worker on the same outbox: one message for the breach.
    posts = fleet["receiver"].posts
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not posts:
        time.sleep(0.2)
    time.sleep(4 * INTERVAL_S)
    assert [p["json"]["event"] for p in posts] == ["opened"]

    pids = [p.pid for p in fleet["procs"]]
    holder = _wait_holder(fleet["url"], 10)
    assert holder in pids
    victim = fleet["procs"][pids.index(holder)]
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    killed_at = time.monotonic()
    new = _wait_holder(fleet["url"], LEASE_S + 4 * INTERVAL_S + 3, not_pid=holder)
    took = time.monotonic() - killed_at
    assert new in pids and new != holder
    assert took <= LEASE_S + 2 * INTERVAL_S + 1.0, took
    assert _sql(fleet["url"], "SELECT COUNT(*) FROM incidents")[0][0] == 1
