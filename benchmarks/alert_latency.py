"""Alert latency: from the ingest of the sample that completes a breach's ``for`` window to
the chat message arriving at a loopback receiver, over N breaches (median and max seconds).

Usage: .venv/bin/python benchmarks/alert_latency.py [--breaches 20] [--eval-interval 1]
       [--worker-interval 0.25] [--database-url URL]

The service runs for real (uvicorn on loopback, its SLA evaluator every --eval-interval
seconds and its outbox worker in the lifespan); samples go in through POST /api/v1/ingest.
The figure therefore includes waiting for the next evaluator pass.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from correlator.api.app import create_app  # noqa: E402
from correlator.settings import ServiceSettings  # noqa: E402
from correlator.store.engine import make_engine, write_transaction  # noqa: E402
from correlator.store.migrate import upgrade  # noqa: E402
from correlator.store.slas import upsert_sla  # noqa: E402
from correlator.store.tokens import create_token  # noqa: E402
from tests.alerts.receiver import Receiver  # noqa: E402
from tests.helpers import free_port  # noqa: E402

FOR_S, STEP = 30.0, 15.0


def _series(model: str, ts: list[float], values: list[float]) -> dict:
    return {
        "name": "model_latency_p99_ms",
        "labels": {"model": model, "instance": "i-1"},
        "timestamps": ts,
        "values": values,
    }


def main() -> int:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--breaches", type=int, default=20)
    ap.add_argument("--eval-interval", type=float, default=1.0)
    ap.add_argument("--worker-interval", type=float, default=0.25)
    ap.add_argument("--database-url")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    url = args.database_url or f"sqlite:///{tmp.name}/bench.db"
    engine = make_engine(url)
    upgrade(engine)
    arrivals: dict[str, float] = {}

    def check(path, query, headers, body):
        arrivals.setdefault(json.loads(body)["sla"], time.time())
        return 200, {"ok": True}

    receiver = Receiver(check).start()
    settings = ServiceSettings(
        database_url=url,
        alert_routes_json=json.dumps(
            {
                "channels": [
                    {
                        "name": "chat",
                        "kind": "webhook",
                        "url": receiver.url + "/chat",
                        "rate_per_minute": 1000,
                    }
                ]
            }
        ),
        alert_worker_enabled=True,
        alert_worker_interval_seconds=args.worker_interval,
        evaluator_enabled=True,
        evaluator_interval_seconds=args.eval_interval,
    )
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="bench")
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, engine=make_engine(url)), port=port, log_level="warning"
        )
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    client = httpx.Client(
        base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}
    )
    latencies = []
    try:
        for i in range(args.breaches):
            model, name = f"bench_{i}", f"bench {i} p99"
            with write_transaction(engine) as conn:
                upsert_sla(
                    conn=conn,
                    sla={
                        "name": name,
                        "metric": "model_latency_p99_ms",
                        "labels": {"model": model},
                        "aggregate": "max",
                        "op": ">",
                        "threshold": 50,
                        "for_seconds": FOR_S,
                    },
                )
            now = time.time()
            ts = [now - 600 + STEP * k for k in range(40)]  # up to now - 15 s
            values = [20.0 if t < now - FOR_S - 1 else 120.0 for t in ts]
            client.post("/api/v1/ingest", json={"series": [_series(model, ts, values)]})
            time.sleep(random.uniform(0.0, args.eval_interval))  # any phase of the evaluator
            t_ingest = time.time()
            resp = client.post(
                "/api/v1/ingest", json={"series": [_series(model, [t_ingest], [130.0])]}
            )
            resp.raise_for_status()
            deadline = t_ingest + 60
            while name not in arrivals and time.time() < deadline:
                time.sleep(0.01)
            if name not in arrivals:
                print(f"breach {i}: no message within 60 s", file=sys.stderr)
                continue
            latencies.append(arrivals[name] - t_ingest)
    finally:
        server.should_exit = True
        receiver.stop()
    print(
        f"service evaluator every {args.eval_interval} s, "
        f"outbox worker every {args.worker_interval} s; database {engine.dialect.name}"
    )
    print(f"breaches: {len(latencies)}/{args.breaches}")
    if latencies:
        print(
            f"ingest -> chat message: median {statistics.median(latencies):.2f} s, "
            f"max {max(latencies):.2f} s (min {min(latencies):.2f} s)"
        )
    return 0 if len(latencies) == args.breaches else 1


if __name__ == "__main__":
    raise SystemExit(main())
