"""Fixtures for alert tests: settings with routes to loopback receivers, stored incidents."""

from __future__ import annotations

import json

import pytest

from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.incidents import get_incident, open_incident, set_snapshot
from correlator.store.slas import upsert_sla
from tests.alerts.receiver import Receiver
from tests.alerts.samples import SLA, T0, sample_incident


def alert_settings(engine, channels: list[dict], routes=None, default=None, **extra):
    """Return service settings on the engine's database with these channels and routes."""
    config = {"channels": channels, "routes": routes or []}
    if default is not None:
        config["default"] = default
    values = {
        "database_url": engine.url.render_as_string(hide_password=False),
        "public_url": "https://causeline.example",
        "alert_routes_json": json.dumps(config),
        "alert_retry_base_seconds": 2.0,
        "alert_max_age_seconds": None,  # the samples are from 2024
    }
    return ServiceSettings(**(values | extra))


def store_incident(engine, *, sla: dict = SLA, model_suspect: bool = True, at: float = T0) -> dict:
    """Open an incident with the sample snapshot; return its API form."""
    snap = {k: v for k, v in sample_incident().items() if k in ("scope", "suspects", "changes")}
    snap["oncall"] = sample_incident()["oncall"]
    if not model_suspect:
        snap["suspects"] = snap["suspects"][2:]
    with write_transaction(engine) as conn:
        upsert_sla(conn=conn, sla=dict(sla))
        incident_id = open_incident(
            conn=conn, sla=sla["name"], severity="critical", breach_start=at, now=at + 30, by="t"
        )
        set_snapshot(conn=conn, incident_id=incident_id, snapshot=snap, now=at + 30)
        return get_incident(conn=conn, incident_id=incident_id)


@pytest.fixture
def receiver():
    """Yield a started loopback receiver that accepts everything."""
    r = Receiver().start()
    yield r
    r.stop()
