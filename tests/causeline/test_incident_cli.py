"""The incident-handling and catalogue subcommands end to end on a real database."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from causeline.cli import main
from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.slas import upsert_sla
from correlator.store.tokens import create_token
from tests.api.test_models import CARD


def _run(capsys, db_url, *argv) -> str:
    assert main([*argv, "--database-url", db_url]) == 0
    return capsys.readouterr().out


def test_change_model_oncall_capacity_commands(capsys, db_url, engine, tmp_path):
    out = _run(
        capsys,
        db_url,
        "change",
        "add",
        "--kind",
        "deploy",
        "--owner",
        "algo",
        "--target",
        "model:m",
        "--summary",
        "m 2.0 canary",
        "--planned",
        "2030-01-01T10:00Z",
        "--stage",
        "canary",
        "--canary-percent",
        "5",
        "--label",
        "model=m",
        "--id",
        "c-1",
        "--author",
        "li",
    )
    assert json.loads(out)["status"] == "planned"
    out = _run(capsys, db_url, "change", "done", "c-1", "--at", "2030-01-01T10:05Z")
    assert json.loads(out)["unplanned"] is False
    out = _run(capsys, db_url, "change", "list", "--from", "2030-01-01", "--to", "2030-01-02")
    assert "c-1" in out and "UNPLANNED" not in out
    _run(capsys, db_url, "model", "add", "m")
    card = tmp_path / "card.json"
    card.write_text(json.dumps(CARD))
    assert (
        json.loads(_run(capsys, db_url, "model", "card", "m", "2.0", str(card)))["version"] == "2.0"
    )
    _run(capsys, db_url, "model", "instance", "m", "m-0", "--version", "2.0", "--host", "h1")
    assert "m-0" in _run(capsys, db_url, "model", "impact", "user-features")
    _run(
        capsys,
        db_url,
        "oncall",
        "rotation",
        "algo",
        "li=@li",
        "--team",
        "algo",
        "--start",
        "2030-01-01",
    )
    assert "li @li (rotation)" in _run(capsys, db_url, "oncall", "now", "--at", "2030-01-02")
    argv = ["capacity", "plan", "--sla-ms", "30", "--latency-ms", "12"]
    assert main([*argv, "--qps-per-replica", "40", "--peak-qps", "400"]) == 0
    out = capsys.readouterr().out
    assert "=> 10 replicas, 12 with redundancy" in out


def test_incident_commands(capsys, db_url, engine):

    t0 = 1_733_000_000.0
    with write_transaction(engine) as conn:
        upsert_sla(
            conn=conn,
            sla={
                "name": "m p99",
                "metric": "lat",
                "labels": {},
                "op": ">",
                "threshold": 5,
                "for_seconds": 30,
            },
        )
    batch = {
        "series": [
            {
                "name": "lat",
                "labels": {"model": "m"},
                "timestamps": [t0 + 15 * k for k in range(30)],
                "values": [1.0] * 20 + [9.0] * 10,
            }
        ]
    }
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="cli")
    with TestClient(create_app(ServiceSettings(database_url=db_url), engine=engine)) as c:
        resp = c.post("/api/v1/ingest", json=batch, headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 200
    report = json.loads(_run(capsys, db_url, "incident", "evaluate", "--at", str(t0 + 15 * 29)))
    assert len(report["opened"]) == 1
    inc = str(report["opened"][0])
    assert "m p99" in _run(capsys, db_url, "incident", "list")
    _run(
        capsys, db_url, "incident", "note", inc, "looked at it", "--team", "infra", "--author", "w"
    )
    assert json.loads(_run(capsys, db_url, "incident", "show", inc))["notes"][0]["author"] == "w"
    _run(capsys, db_url, "incident", "resolve", inc, "--text", "fixed")
    review = _run(capsys, db_url, "incident", "export", inc)
    assert review.startswith("# Post-incident review") and "fixed" in review
    assert main(["incident", "resolve", inc, "--database-url", db_url]) == 2
