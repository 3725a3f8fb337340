"""The background SLA evaluator: one pass opens and resolves incidents under a lease."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid

from sqlalchemy import Engine, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from correlator.process.announce import resolve_and_announce, snapshot_and_announce
from correlator.process.live import sla_state
from correlator.process.snapshot import build_snapshot
from correlator.store.catalog import list_slas
from correlator.store.engine import write_transaction
from correlator.store.incidents import (
    add_note,
    open_incident,
    open_incident_for,
)
from correlator.store.lease import take_lease
from correlator.store.tables import Incident
from correlator.store.windows import sla_series

LEASE = "sla-evaluator"
# Grid phase moves a little as the window slides: starts this close are the same breach.
SAME_BREACH_S = 60.0
log = logging.getLogger(__name__)


def holder_name() -> str:
    """Return a name unique to this process: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _lookback(sla: dict) -> float:
    return max(3600.0, 3 * float(sla.get("for_seconds") or 0) + 900.0)


def _last_resolved(conn, sla: str) -> Incident | None:
    stmt = (
        select(Incident)
        .where(Incident.sla == sla, Incident.status == "resolved")
        .order_by(Incident.resolved_at.desc())
    )
    return Session(conn).scalars(stmt).first()


def _same_breach(last: Incident, start: float) -> bool:
    """Say whether a breach starting at ``start`` is the run a resolved incident was about."""
    if last.breach_end is not None:
        return start < last.breach_end
    return start <= last.breach_start + SAME_BREACH_S


def _check(
    engine: Engine, sla: dict, *, now: float, holder: str, report: dict, settings=None
) -> None:
    with engine.connect() as conn:
        state = sla_state(sla_series(conn=conn, sla=sla, start=now - _lookback(sla), end=now), sla)
    name = sla["name"]
    if state.breaching:
        try:
            with write_transaction(engine) as conn:
                if open_incident_for(conn=conn, sla=name) is not None:
                    return
                last = _last_resolved(conn, name)
                if last is not None and _same_breach(last, state.start):
                    return  # resolved by hand while this same breach goes on
                incident_id = open_incident(
                    conn=conn,
                    sla=name,
                    severity=sla.get("severity") or "major",
                    breach_start=state.start,
                    now=now,
                    by=holder,
                )
        except IntegrityError:
            return  # another process opened it first
        report["opened"].append(incident_id)
        snap = build_snapshot(engine, sla_name=name, breach_start=state.start, now=now)
        with write_transaction(engine) as conn:
            snapshot_and_announce(
                conn=conn,
                incident_id=incident_id,
                snapshot=snap,
                now=now,
                settings=settings,
                event="opened",
            )
    elif state.known and state.ok_since is not None:
        with write_transaction(engine) as conn:
            row = open_incident_for(conn=conn, sla=name)
            if row is None or state.ok_since < row.breach_start:
                return
            resolve_and_announce(
                conn=conn,
                incident_id=row.id,
                now=now,
                by="evaluator",
                breach_end=state.ok_since,
                settings=settings,
            )
            add_note(
                conn=conn,
                incident_id=row.id,
                author="evaluator",
                team="other",
                text=f"SLA recovered: {sla['metric']} back within {sla['op']} {sla['threshold']}",
                now=now,
            )
        report["resolved"].append(row.id)


def evaluate_once(
    engine: Engine,
    *,
    holder: str,
    now: float | None = None,
    lease_seconds: float = 90.0,
    settings=None,
) -> dict:
    """Check every SLA once if this process holds the lease; return what changed."""
    now = time.time() if now is None else now
    # The lease is taken on wall-clock time: evaluating past data must not steal it forever.
    with write_transaction(engine) as conn:
        held = take_lease(
            conn=conn, name=LEASE, holder=holder, now=time.time(), seconds=lease_seconds
        )
    report: dict = {
        "held_lease": held,
        "holder": holder,
        "opened": [],
        "resolved": [],
        "checked": 0,
    }
    if not held:
        return report
    with engine.connect() as conn:
        slas = [s for s in list_slas(conn=conn) if s.get("op") and s.get("threshold") is not None]
    for sla in slas:
        try:
            _check(engine, sla, now=now, holder=holder, report=report, settings=settings)
        except Exception:  # one bad SLA must not stop the others
            log.exception("evaluating SLA %r failed", sla.get("name"))
        report["checked"] += 1
    return report


async def run_evaluator(
    engine: Engine,
    *,
    interval: float,
    lease_seconds: float,
    holder: str | None = None,
    settings=None,
) -> None:
    """Evaluate every ``interval`` seconds until cancelled."""
    holder = holder or holder_name()
    while True:
        try:
            await asyncio.to_thread(
                evaluate_once,
                engine,
                holder=holder,
                lease_seconds=lease_seconds,
                settings=settings,
            )
        except Exception:
            log.exception("SLA evaluation pass failed")
        await asyncio.sleep(interval)
