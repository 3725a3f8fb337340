"""A small GPU fleet in the real VictoriaMetrics: each incident kind opened once, alerted once,
its root cause in the top 3, read through the shipped mapping as a fleet runs causeline."""

from __future__ import annotations

import json
import time

import httpx
import numpy as np
import pytest

from correlator.alerts.outbox import list_outbox
from correlator.incidents import snapshot
from correlator.incidents.evaluator import evaluate_once
from correlator.promsource import make_source
from correlator.settings import ServiceSettings
from correlator.store.changes import upsert_changes
from correlator.store.engine import write_transaction
from correlator.store.incidents import get_incident, list_incidents
from correlator.store.slas import upsert_sla
from correlator.store.topology import upsert_topology
from tests.fleet import simulation
from tests.promsource import servers

pytestmark = pytest.mark.integration
NODES, MODELS = 6, 3  # 6 x 2 GPUs x 10 DCGM series, 6 x 27 node series, 15 replicas, 3 features
SEEDS = {"vllm": 3, "triton": 1}  # the incident at m2 (vLLM) or m1 (Triton)
# Every kind at a vLLM model and at a Triton one; prompt lengths are vLLM's histogram only.
CASES = [(k, s) for k in simulation.KINDS for s in SEEDS if (k, s) != ("input_length", "triton")]
HOOK = {"channels": [{"name": "chat", "kind": "webhook", "url": "http://127.0.0.1:9/hook"}]}


@pytest.mark.parametrize(("kind", "served"), CASES)
def test_each_incident_kind_is_opened_alerted_and_ranked_once(
    tmp_path, kind, served, engine, monkeypatch
):
    """Records in SQLite and in PostgreSQL (as a fleet keeps them), metrics in VictoriaMetrics."""
    # The fleet holds more series than one analysis reads: it reads its scope, as at full size.
    monkeypatch.setattr(snapshot, "MAX_SERIES", 300)
    end = float(np.floor(time.time() / simulation.STEP) * simulation.STEP) - 60  # VM: no future
    ts = np.arange(end - 3600, end + 1, simulation.STEP)
    breach = end - 600
    fleet = simulation.build(
        kind, nodes=NODES, models=MODELS, ts=ts, breach=breach, seed=SEEDS[served], gpus=2, cpus=1
    )
    assert simulation.server(fleet.model) == served
    assert 300 <= len(fleet.series) <= 1000, len(fleet.series)  # a few hundred series
    ctx, url = servers.victoria_metrics(tmp_path, None)
    with ctx:
        body = servers.exposition(fleet.series, millis=True)
        httpx.post(f"{url}/api/v1/import/prometheus", content=body, timeout=120)
        httpx.get(f"{url}/internal/force_flush", timeout=60).raise_for_status()
        with write_transaction(engine) as conn:
            upsert_topology(conn=conn, topology=fleet.topology)
            upsert_changes(conn=conn, changes=fleet.changes)
            for sla in fleet.slas:
                upsert_sla(conn=conn, sla=sla)
        settings = ServiceSettings(
            database_url=str(engine.url),
            alert_routes_json=json.dumps(HOOK),
        )
        source = make_source(url, str(simulation.MAPPING))
        scoped: list[list[str]] = []
        whole = source.read_in_scope

        def read_in_scope(**kwargs):
            found, left_out = whole(**kwargs)
            scoped.append(left_out)
            return found, left_out

        source.read_in_scope = read_in_scope
        try:
            at = breach + 180
            # Two replicas evaluate at the same moment; a second pass follows one step later.
            first = evaluate_once(engine, holder="a", now=at, settings=settings, source=source)
            other = evaluate_once(engine, holder="b", now=at, settings=settings, source=source)
            evaluate_once(engine, holder="a", now=at + 15, settings=settings, source=source)
        finally:
            source.close()
        assert first["held_lease"] and not other["held_lease"]
        with engine.connect() as conn:
            incidents = list_incidents(conn=conn)
            assert [i["sla"] for i in incidents] == [f"{fleet.model} p99"], first["slas"]
            incident = get_incident(conn=conn, incident_id=incidents[0]["id"])
            sent = list_outbox(conn=conn, incident_id=incident["id"])
    assert [r["event"] for r in sent] == ["opened"]  # one message, on the one channel
    assert scoped, "the analysis read the whole fleet instead of its scope"
    rank = simulation.rank_of(incident["suspects"], fleet.truth)
    top = [(s.get("metric") or s.get("id"), s.get("labels")) for s in incident["suspects"][:3]]
    assert rank is not None and rank <= 3, (kind, fleet.truth, top)
