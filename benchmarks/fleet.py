"""A GPU fleet in the Debian VictoriaMetrics, an SLA per model, one incident per kind: the cost.

For each incident kind of ``tests/fleet/simulation.py`` (a GPU throttling on 2 of a model's
hosts, a noisy neighbour's CPU, a feature service's latency, a rollout that raises input
length, an XID on one GPU), writes ``--nodes`` GPU nodes (8 GPUs each, dcgm-exporter's
series and labels; node-exporter's per-core CPU modes, memory, disk and network),
``--models`` models on 4-16 replicas each (vLLM and Triton, their own names) and 3 feature
services, ``--hours`` at 15 s, into a fresh VictoriaMetrics (``/api/v1/import``), with the
incident at a model chosen by the seed. causeline keeps SLAs (one per model), the topology
and the changes in SQLite and reads metrics through its Prometheus source with the shipped
``deploy/prometheus/mappings/fleet.yml``, as a fleet runs it.

Per kind it prints one evaluation pass over every SLA (seconds, CPU seconds, queries sent
to the TSDB, series and samples answered; the pass opens the incident and ranks it),
whether a second replica's pass at the same moment stayed out (the lease), a quiet pass
(what every 30 s costs when nothing breaches), the rank of the root cause and the top
suspect; then the share at rank 1 and in the top 3, and the process's peak memory.

    python benchmarks/fleet.py                      # 200 nodes, 40 models, 1 h, every kind
    python benchmarks/fleet.py --nodes 1000 --models 100 --hours 2 --kind xid  # ~250k series
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))  # after the project: dashboard/ wins

from correlator.incidents.evaluator import evaluate_once  # noqa: E402
from correlator.promsource import make_source  # noqa: E402
from correlator.settings import ServiceSettings  # noqa: E402
from correlator.store.changes import upsert_changes  # noqa: E402
from correlator.store.engine import make_engine, write_transaction  # noqa: E402
from correlator.store.incidents import get_incident, list_incidents  # noqa: E402
from correlator.store.migrate import upgrade  # noqa: E402
from correlator.store.slas import upsert_sla  # noqa: E402
from correlator.store.topology import upsert_topology  # noqa: E402
from tests.fleet import simulation  # noqa: E402
from tests.helpers import free_port  # noqa: E402
from tests.promsource import servers  # noqa: E402

STEP = simulation.STEP


class Counted:
    """A prometheus-api-client that counts the queries it sends and the series answered."""

    def __init__(self, client):
        self.client, self.queries, self.series, self.samples = client, 0, 0, 0

    def custom_query_range(self, *args, **kwargs):
        self.queries += 1
        found = self.client.custom_query_range(*args, **kwargs)
        self.series += len(found)
        self.samples += sum(len(r.get("values") or ()) for r in found)
        return found

    def custom_query(self, *args, **kwargs):
        self.queries += 1
        return self.client.custom_query(*args, **kwargs)


def main() -> None:
    """Write the fleet once per kind, evaluate every SLA once, print the figures."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--models", type=int, default=40)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--cpus", type=int, default=16, help="cores per node (node-exporter series)")
    ap.add_argument("--kind", choices=(*simulation.KINDS, "all"), default="all")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--board",
        action="store_true",
        help="also load the breached model's board and incident page in headless Chromium",
    )
    args = ap.parse_args()
    kinds = simulation.KINDS if args.kind == "all" else (args.kind,)
    ranks = []
    for kind in kinds:
        end = (time.time() // STEP) * STEP - 60
        ts = np.arange(end - args.hours * 3600, end + 1, STEP)
        breach = end - 20 * 60
        began = time.perf_counter()
        fleet = simulation.build(
            kind,
            nodes=args.nodes,
            models=args.models,
            ts=ts,
            breach=breach,
            seed=args.seed,
            cpus=args.cpus,
        )
        samples = sum(s.ts.size for s in fleet.series)
        served = simulation.server(fleet.model)
        print(f"== {kind} at {fleet.model} ({served}): {args.nodes} nodes x 8 GPUs, ", end="")
        print(f"{args.models} models on {sum(len(h) for h in placement(args).values()):,} replicas")
        print(
            f"  {len(fleet.series):,} series, {samples:,} samples over {args.hours:g} h at 15 s "
            f"(built in {time.perf_counter() - began:.0f} s)"
        )
        with tempfile.TemporaryDirectory() as folder:
            tmp = Path(folder)
            ctx, url = servers.victoria_metrics(tmp, None)
            with ctx:
                began = time.perf_counter()
                write(url, fleet.series)
                took = time.perf_counter() - began
                print(
                    f"  written into VictoriaMetrics in {took:.0f} s "
                    f"({samples / took / 1e6:.2f} M samples/s)"
                )
                fleet.series = []
                ranks.append(run(tmp, url, args, breach + 180, fleet))
    hits = [r for r in ranks if r is not None]
    print(
        f"root cause at rank 1: {sum(r == 1 for r in hits)}/{len(ranks)}, "
        f"in the top 3: {sum(r <= 3 for r in hits)}/{len(ranks)}"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak memory of this process (fleet building and TSDB writing included): {peak:,.0f} MiB"
    )


def placement(args) -> dict[str, list[str]]:
    """Return each model's replica hosts, as the simulation places them."""
    return simulation.placement(args.models, args.nodes)


def write(url: str, series, batch: int = 2_000) -> None:
    """Write series through VictoriaMetrics' JSON-lines import, the next batch built meanwhile."""
    times: dict[int, str] = {}

    def line(s) -> str:
        stamps = times.get(id(s.ts))
        if stamps is None:
            stamps = times[id(s.ts)] = json.dumps((s.ts * 1000).astype(int).tolist())
        metric = json.dumps({"__name__": s.name, **s.labels})
        return (
            f'{{"metric":{metric},"values":{json.dumps(s.values.tolist())},"timestamps":{stamps}}}'
        )

    def post(body: str) -> None:
        httpx.post(f"{url}/api/v1/import", content=body, timeout=600).raise_for_status()

    with ThreadPoolExecutor(1) as pool:
        pending = None
        for i in range(0, len(series), batch):
            body = "\n".join(line(s) for s in series[i : i + batch]) + "\n"
            if pending is not None:
                pending.result()
            pending = pool.submit(post, body)
        if pending is not None:
            pending.result()
    httpx.get(f"{url}/internal/force_flush", timeout=600).raise_for_status()


def keep_records(engine, fleet: simulation.Fleet) -> None:
    """Give a fresh database its schema and the fleet's topology, changes and SLAs."""
    upgrade(engine)
    with write_transaction(engine) as conn:
        upsert_topology(conn=conn, topology=fleet.topology)
        upsert_changes(conn=conn, changes=fleet.changes)
        for sla in fleet.slas:
            upsert_sla(conn=conn, sla=sla)


def run(tmp: Path, url: str, args, at: float, fleet: simulation.Fleet) -> int | None:
    """Evaluate every SLA once as two replicas would; print the figures; return the rank."""
    engine = make_engine(f"sqlite:///{tmp / 'causeline.db'}")
    keep_records(engine, fleet)
    source = make_source(url, str(simulation.MAPPING))
    settings = ServiceSettings(database_url=str(engine.url))
    client = source.reader.client  # each pass counts what it asks through its own wrapper

    def evaluated(now: float, holder: str = "a"):
        """Return one pass's report, seconds, CPU seconds and the TSDB queries it sent."""
        counted = Counted(client)
        source.reader.client = counted
        began, cpu = time.perf_counter(), time.process_time()
        report = evaluate_once(engine, holder=holder, now=now, settings=settings, source=source)
        return report, time.perf_counter() - began, time.process_time() - cpu, counted

    _, took, cpu, quiet = evaluated(at - 900)  # before the breach: what each 30 s costs
    print(
        f"  a quiet pass (nothing breached): {took:.2f} s, {cpu:.2f} CPU s "
        f"({100 * cpu / 30:.0f} % of a core at 30 s passes), {quiet.queries} queries, "
        f"{quiet.series:,} series and {quiet.samples:,} samples answered"
    )
    report, took, cpu, counted = evaluated(at)
    other, *_ = evaluated(at, holder="b")
    print(
        f"  evaluation pass over {report['checked']} SLAs (opening and ranking what breaches): "
        f"{took:.2f} s, {cpu:.2f} CPU s, {counted.queries} queries "
        f"({counted.queries / took:.0f}/s), {counted.series:,} series and "
        f"{counted.samples:,} samples answered; opened {report['opened']}; "
        f"a second replica's pass: {'stayed out' if not other['held_lease'] else 'ALSO RAN'}"
    )
    rank = None
    with engine.connect() as conn:
        for found in list_incidents(conn=conn):
            incident = get_incident(conn=conn, incident_id=found["id"])
            suspects = incident["suspects"]
            rank = simulation.rank_of(suspects, fleet.truth)
            top = suspects[0] if suspects else {}
            print(
                f"  incident {found['id']} ({found['sla']}): root cause at rank {rank}; top "
                f"{top.get('metric') or top.get('id')} {top.get('labels') or ''}"
            )
    source.close()
    engine.dispose()
    if args.board and rank is not None:
        pages(str(engine.url), url, fleet.model, at)
    return rank


def pages(db_url: str, tsdb: str, model: str, at: float) -> None:
    """Load the model's board and its incident page from the TSDB; print seconds to drawn."""
    import importlib.util
    import threading

    import uvicorn

    from causeline.commands.up import build_app

    # benchmarks/dashboard.py (not the dashboard package): time to the last panel drawn.
    spec = importlib.util.spec_from_file_location(
        "board_benchmark", Path(__file__).with_name("dashboard.py")
    )
    board_benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(board_benchmark)
    measure, browser_of = board_benchmark.measure, board_benchmark._browser

    port = free_port()
    extra = {"prometheus_url": tsdb, "evaluator_enabled": False, "alert_worker_enabled": False}
    app = build_app(database_url=db_url, host="127.0.0.1", port=port, extra=extra)
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    driver = browser_of()
    try:
        board = f"{base}/board?model={model}&from={round(at - 1800)}&to={round(at + 600)}"
        for run in range(3):
            got = measure(driver, board, cold=run == 0)
            print(
                f"  board of {model} from the TSDB ({'cold' if run == 0 else 'warm'}): "
                f"{got['seconds']:.2f} s to the last of {got['panels']} panels drawn"
            )
        began = time.perf_counter()
        driver.get(f"{base}/incidents/1")
        while not driver.find_elements("css selector", "#incident-suspects tbody tr"):
            time.sleep(0.02)
        print(f"  incident page: {time.perf_counter() - began:.2f} s to its ranked suspects")
    finally:
        driver.quit()
        server.should_exit = True


if __name__ == "__main__":
    main()
