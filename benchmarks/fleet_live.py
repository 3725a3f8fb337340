"""A fleet live: two causeline replicas on PostgreSQL watch VictoriaMetrics; breach -> chat, timed.

Each round writes a fleet's history (``tests/fleet/simulation.py``, as ``benchmarks/fleet.py``:
a bulk import) into a fresh Debian VictoriaMetrics, then remote-writes every 15 s scrape of
every series as the clock reaches it, as the agents do. Two ``causeline serve`` processes
share a fresh PostgreSQL database (the SLAs, topology and changes), read metrics through the
shipped ``deploy/prometheus/mappings/fleet.yml``, check every SLA each ``--interval``
seconds (one holds the evaluator's lease at a time) and send to one webhook channel, a
loopback receiver standing for the chat. The round's incident (the kinds in turn, at a
model the seed picks) breaches ``--lead-in`` seconds after the history ends.

Printed per round and as medians: the first breaching sample -> the "opened" message with
ranked suspects (the SLA's ``for`` of 60 s included), the same from the moment the ``for``
ran out, the root cause's rank in the incident, incidents and messages for the breach (one
each with two replicas), the writer's lag, each replica's CPU over the live phase, its peak
memory and its evaluator's passes (from its ``/metrics``).

    python benchmarks/fleet_live.py                                  # 200 nodes, 3 rounds
    python benchmarks/fleet_live.py --nodes 1000 --models 100 --hours 1 --rounds 5 --lead-in 150
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import numpy as np
import psutil
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fleet import keep_records, write  # noqa: E402

from collector.prompb import encode_samples, label_fields  # noqa: E402
from collector.remote_write import PROTOCOL_HEADERS  # noqa: E402
from collector.snappy import compress  # noqa: E402
from correlator.bundle import Series  # noqa: E402
from correlator.store.engine import make_engine  # noqa: E402
from correlator.store.incidents import get_incident, list_incidents  # noqa: E402
from tests.alerts.receiver import Receiver  # noqa: E402
from tests.fleet import simulation  # noqa: E402
from tests.helpers import free_port, poll, unlabelled_samples  # noqa: E402
from tests.promsource import servers  # noqa: E402

STEP = simulation.STEP
PG = os.environ.get("CAUSELINE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
CAUSELINE = Path(sys.executable).with_name("causeline")


class Scraper(threading.Thread):
    """Remote-write each remaining step of every series once the clock reaches it; keep the lag.

    As Prometheus' remote write sends by default: at most ``SEND`` samples a request.
    """

    SEND = 2_000  # Prometheus' queue_config max_samples_per_send

    def __init__(self, url: str, series, first: int):
        super().__init__(daemon=True)
        self.url, self.series, self.first = url, series, first
        self.heads = [label_fields(s.name, s.labels) for s in series]
        self.lags: dict[float, float] = {}  # a step's time -> seconds until it was written
        self.error: Exception | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            self._write()
        except Exception as exc:  # the round reports it instead of waiting for a breach
            self.error = exc

    def _write(self) -> None:
        ts = self.series[0].ts
        with httpx.Client(timeout=60) as client:
            for k in range(self.first, ts.size):
                if self.stop.wait(max(0.0, ts[k] + 1 - time.time())):
                    return
                at = [float(ts[k])]
                for i in range(0, len(self.series), self.SEND):
                    body = b"".join(
                        encode_samples(head, at, [s.values[k]])
                        for head, s in zip(
                            self.heads[i : i + self.SEND],
                            self.series[i : i + self.SEND],
                            strict=True,
                        )
                    )
                    url = f"{self.url}/api/v1/write"
                    got = client.post(url, content=compress(body), headers=PROTOCOL_HEADERS)
                    got.raise_for_status()
                self.lags[float(ts[k])] = time.time() - ts[k]


@contextmanager
def database(server: str):
    """Yield the URL of a fresh database on the PostgreSQL server; drop it afterwards."""
    name = f"causeline_fleet_live_{os.getpid()}_{secrets.token_hex(3)}"
    admin = make_engine(server).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def one_round(args, kind: str, seed: int) -> dict | None:
    """Run one live incident; print and return its figures (None when it could not run)."""
    now = time.time()
    end = (now // STEP) * STEP
    breach = np.ceil((now + args.lead_in) / STEP) * STEP
    ts = np.arange(end - args.hours * 3600, breach + args.interval + 300, STEP)
    fleet = simulation.build(
        kind, nodes=args.nodes, models=args.models, ts=ts, breach=breach, seed=seed, cpus=args.cpus
    )
    history = int(np.searchsorted(ts, end, side="right"))
    print(
        f"== {kind} at {fleet.model} ({simulation.server(fleet.model)}): {len(fleet.series):,} "
        f"series; the breach begins {breach - end:.0f} s after the history's end",
        flush=True,
    )
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        ctx, vm = servers.victoria_metrics(tmp, None)
        stack.enter_context(ctx)
        began = time.perf_counter()
        write(vm, [_head(s, history) for s in fleet.series])
        print(f"  history written in {time.perf_counter() - began:.0f} s", flush=True)
        if time.time() > breach - 2 * STEP:
            print("  SKIPPED: the history took past the breach; give a larger --lead-in")
            return None
        scraper = Scraper(vm, fleet.series, history)
        scraper.start()
        stack.callback(scraper.stop.set)
        db = stack.enter_context(database(args.database_url))
        engine = make_engine(db)
        stack.callback(engine.dispose)
        keep_records(engine, fleet)
        chat = Receiver().start()
        stack.callback(chat.stop)
        routes = {"channels": [{"name": "chat", "kind": "webhook", "url": f"{chat.url}/hook"}]}
        env = os.environ | {
            "CAUSELINE_DATABASE_URL": db,
            "CAUSELINE_PROMETHEUS_URL": vm,
            "CAUSELINE_PROMETHEUS_MAPPING": str(simulation.MAPPING),
            "CAUSELINE_EVALUATOR_INTERVAL_SECONDS": str(args.interval),
            "CAUSELINE_ALERT_ROUTES_JSON": json.dumps(routes),
            "CAUSELINE_ALERT_ALLOWED_HOSTS": "127.0.0.1",
            "CAUSELINE_ACTION_SECRET": secrets.token_urlsafe(32),
        }
        replicas, ports = [], []
        for name in ("a", "b"):
            port = free_port()
            argv = [str(CAUSELINE), "serve", "--port", str(port)]
            log = tmp / f"replica-{name}.log"
            ready = f"http://127.0.0.1:{port}/readyz"
            proc = stack.enter_context(servers.running(argv, log, ready, 60, env=env))
            replicas.append(psutil.Process(proc.pid))
            ports.append(port)
        cpu0 = [p.cpu_times() for p in replicas]
        live0 = time.time()

        def opened():
            return [p for p in chat.posts if p["json"].get("event") == "opened"]

        got = poll(
            lambda: opened() or scraper.error,
            breach - time.time() + 60 + 4 * args.interval + 120,
        )
        if scraper.error is not None:
            print(f"  the scraper failed: {scraper.error}")
            return None
        if not got:
            print("  NO MESSAGE: the breach was not alerted in time")
            for name in ("a", "b"):
                print((tmp / f"replica-{name}.log").read_text()[-2000:])
            return None
        first = got[0]
        time.sleep(args.interval + 5)  # another pass by either replica: nothing new may come
        live = time.time() - live0
        cpu = [_cpu(p.cpu_times()) - _cpu(c) for p, c in zip(replicas, cpu0, strict=True)]
        with engine.connect() as conn:
            incidents = list_incidents(conn=conn)
            incident = get_incident(conn=conn, incident_id=first["json"]["incident_id"])
        rank = simulation.rank_of(incident["suspects"], fleet.truth)
        row = {
            "to_message": first["at"] - breach,
            "after_for": first["at"] - breach - fleet.slas[0]["for_seconds"],
            "rank": rank,
            "incidents": len(incidents),
            "messages": len(opened()),
        }
        passes = [
            unlabelled_samples(httpx.get(f"http://127.0.0.1:{p}/metrics", timeout=10).text)
            for p in ports
        ]
        peaks = [_peak_mib(p.pid) for p in replicas]
        lag = max((v for t, v in scraper.lags.items() if t >= breach - 60), default=0.0)
        print(
            f"  first breaching sample -> opened message: {row['to_message']:.1f} s "
            f"({row['after_for']:.1f} s after the SLA's for of "
            f"{fleet.slas[0]['for_seconds']:.0f} s ran out); root cause at rank {rank}; "
            f"{row['incidents']} incident(s), {row['messages']} opened message(s); "
            f"top suspect in the message: {first['json'].get('top_suspect')}",
            flush=True,
        )
        print(
            f"  replicas' CPU over {live:.0f} s live: "
            + ", ".join(
                f"{100 * c / live:.0f} % of a core (peak {m:,.0f} MiB)"
                for c, m in zip(cpu, peaks, strict=True)
            )
            + f"; the scraper's worst lag from a minute before the breach: {lag:.1f} s",
            flush=True,
        )
        for name, got in zip("ab", passes, strict=True):
            ran = got.get("causeline_evaluator_passes_total", 0)
            mean = got.get("causeline_evaluator_pass_seconds_total", 0) / max(ran, 1)
            print(
                f"  replica {name}'s evaluator: {ran:.0f} passes run (mean {mean:.2f} s), "
                f"{got.get('causeline_evaluator_passes_skipped_total', 0):.0f} left to the other"
            )
        return row


def _peak_mib(pid: int) -> float:
    """Return a process's peak resident memory (Linux: VmHWM), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _head(s: Series, n: int) -> Series:
    """Return the series' first ``n`` points."""
    return Series(s.name, s.labels, s.ts[:n], s.values[:n])


def _cpu(times) -> float:
    return times.user + times.system


def main() -> int:
    """Run the rounds and print the figures."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--models", type=int, default=40)
    ap.add_argument("--hours", type=float, default=1.0, help="history before the live phase")
    ap.add_argument("--cpus", type=int, default=16, help="cores per node (node-exporter series)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--interval", type=float, default=30.0, help="evaluator interval, seconds")
    ap.add_argument("--lead-in", type=float, default=120.0, help="history end -> breach, s")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--database-url", default=PG, help="a PostgreSQL server (a database is made)")
    args = ap.parse_args()
    rows = []
    for r in range(args.rounds):
        kind = simulation.KINDS[r % len(simulation.KINDS)]
        row = one_round(args, kind, args.seed + r)
        if row is not None:
            rows.append(row)
    if not rows:
        return 1
    ranks = [r["rank"] for r in rows]
    print(
        f"{len(rows)} rounds, evaluator every {args.interval:g} s, two replicas on PostgreSQL: "
        f"first breaching sample -> message median "
        f"{statistics.median(r['to_message'] for r in rows):.1f} s "
        f"(max {max(r['to_message'] for r in rows):.1f} s); after the SLA's for: median "
        f"{statistics.median(r['after_for'] for r in rows):.1f} s; root cause at rank 1 in "
        f"{sum(k == 1 for k in ranks)}/{len(rows)}, top 3 in "
        f"{sum(k is not None and k <= 3 for k in ranks)}/{len(rows)}; one incident and one "
        f"message each: {all(r['incidents'] == 1 and r['messages'] == 1 for r in rows)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
