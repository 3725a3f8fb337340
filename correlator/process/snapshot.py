"""Build an incident's snapshot: ranked suspects, changes, scope, chain and on-call."""

from __future__ import annotations

import logging

from sqlalchemy import Engine

from correlator.analysis import AnalysisError, SlaMatchError, analyze
from correlator.process.chain import build_chain
from correlator.store.catalog import get_sla, read_topology
from correlator.store.changes import query_changes
from correlator.store.oncall import who_is_on_call
from correlator.store.samples import time_bounds
from correlator.store.windows import bundle_for_sla

BEFORE_S = 4 * 3600.0
AFTER_S = 15 * 60.0
log = logging.getLogger(__name__)


def sla_model(sla: dict) -> str:
    """Return the model an SLA protects ('' when none)."""
    return sla.get("model") or (sla.get("labels") or {}).get("model") or ""


def analyze_window(engine: Engine, sla: dict, *, at: float | None, end: float) -> dict:
    """Run the analysis on the stored window around ``at`` (or the newest data up to ``end``)."""
    anchor = at if at is not None else end
    with engine.connect() as conn:
        bundle = bundle_for_sla(
            conn=conn, sla=sla, start=anchor - BEFORE_S, end=min(end, anchor + AFTER_S)
        )
    if at is not None:
        bundle.sla["breach_start"] = at
    return analyze(bundle)


def analyze_stored(engine: Engine, sla_name: str, at: float | None) -> dict | None:
    """Analyse an SLA from stored data; None when no SLA has that name."""
    with engine.connect() as conn:
        sla = get_sla(conn=conn, name=sla_name)
        bounds = time_bounds(conn=conn)
    if sla is None:
        return None
    if bounds is None:
        raise AnalysisError("no samples are stored")
    if "op" not in sla and "breach_start" not in sla and at is None:
        raise AnalysisError("the SLA has no threshold or breach start; give 'at'")
    return analyze_window(engine, sla, at=at, end=bounds[1])


def build_snapshot(engine: Engine, *, sla_name: str, breach_start: float, now: float) -> dict:
    """Return the incident snapshot for an SLA breach, with the analysis run on stored data."""
    with engine.connect() as conn:
        sla = get_sla(conn=conn, name=sla_name) or {"name": sla_name, "metric": "", "labels": {}}
        topology = read_topology(conn=conn)
        changes = query_changes(
            conn=conn, start=breach_start - BEFORE_S, end=max(now, breach_start)
        )
        oncall = who_is_on_call(conn=conn, model=sla_model(sla), at=now)
    snap: dict = {"changes": changes, "oncall": {k: oncall[k] for k in ("algo", "infra")}}
    try:
        result = analyze_window(engine, sla, at=breach_start, end=max(now, breach_start))
    except (AnalysisError, SlaMatchError, ValueError) as exc:
        log.warning("analysis of %r failed: %s", sla_name, exc)
        result = {"suspects": [], "scope": None}
        snap["analysis_error"] = str(exc)
    snap["suspects"] = result.get("suspects") or []
    snap["scope"] = result.get("scope")
    snap["breach_end"] = result.get("breach_end")
    snap["chain"] = build_chain(snap["suspects"], sla=sla, topology=topology)
    return snap
