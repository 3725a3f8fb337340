"""The background SLA evaluator: one pass opens and resolves incidents under a lease."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from correlator.analysis.render import when
from correlator.bundle import Series
from correlator.incidents.announce import Act, resolve_and_announce, snapshot_and_announce
from correlator.incidents.escalation import escalate_due
from correlator.incidents.live import sla_state
from correlator.incidents.snapshot import build_snapshot
from correlator.selector import selector_from_labels
from correlator.store.engine import write_transaction
from correlator.store.incidents import (
    open_incident,
    open_incident_for,
)
from correlator.store.lease import lease_holder, release_lease, take_lease
from correlator.store.recordings import RecordedWindow, list_recordings
from correlator.store.slas import list_slas
from correlator.store.tables import Incident
from correlator.store.windows import MetricSource, sla_series
from correlator.vocabulary import DEFAULT_SEVERITY

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from correlator.settings import ServiceSettings


LEASE = "sla-evaluator"
# How long a stopping evaluator lets its pass in flight finish before it gives the lease up.
RELEASE_WAIT_S = 10.0
# Grid phase moves a little as the window slides: starts this close are the same breach.
SAME_BREACH_S = 60.0
log = logging.getLogger(__name__)


@dataclass
class PassStats:
    """What this process's evaluator loop has done; the service's ``/metrics`` shows it."""

    passes: int = 0  # passes run while holding the lease
    skipped: int = 0  # passes another replica's lease kept out
    seconds: float = 0.0  # time spent in passes run, in all
    last_seconds: float | None = None
    last_at: float | None = None  # when the last pass run ended (unix seconds)
    last_checked: int = 0
    holds_lease: bool = False

    def record(self, report: dict) -> None:
        """Count one pass from its report."""
        self.holds_lease = bool(report.get("held_lease"))
        if not self.holds_lease:
            self.skipped += 1
            return
        self.passes += 1
        self.last_seconds = float(report.get("seconds") or 0.0)
        self.seconds += self.last_seconds
        self.last_at = time.time()
        self.last_checked = int(report.get("checked") or 0)


def holder_name() -> str:
    """Return a name unique to this process: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _lookback(sla: dict) -> float:
    return max(3600.0, 3 * float(sla.get("for_seconds") or 0) + 900.0)


def _last_resolved(conn: Connection, sla: str) -> Incident | None:
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


@dataclass(slots=True)
class _Pass:
    """One evaluation pass: the store, as of when, who evaluates, with what, what it found."""

    engine: Engine
    now: float
    holder: str
    report: dict
    settings: ServiceSettings  # the alert routes the incidents' messages go to
    source: MetricSource | None = None
    family: dict[str, list[Series]] = field(default_factory=dict)  # a source's metric, read once


def _prefetch(p: _Pass, slas: list[dict]) -> None:
    """Read each source metric that threshold SLAs watch once for the pass, not once per SLA.

    A hundred models' latency SLAs on one metric are one query: narrowed to the label every
    one of them selects by (``model=~"m1|m2|..."``) where the source can narrow, else whole.
    """
    source = p.source
    if source is None:
        return
    families: dict[str, list[dict]] = {}
    for sla in slas:
        if sla.get("op") and sla.get("threshold") is not None and sla["metric"] in source.metrics:
            families.setdefault(sla["metric"], []).append(sla)
    narrow = getattr(source, "read_in_scope", None)
    for metric, group in families.items():
        start = p.now - max(_lookback(s) for s in group)
        common = set.intersection(*(set(s.get("labels") or {}) for s in group))
        values = {k: {str(s["labels"][k]) for s in group} for k in common}
        try:
            if narrow is not None and values:
                found, _ = narrow(
                    names=[metric], start=start, end=p.now, values=values, max_series=None
                )
            else:
                found = source.read(names=[metric], start=start, end=p.now)
        except Exception:  # each SLA then reads (and reports) on its own
            log.exception("reading %s for %d SLAs failed", metric, len(group))
            continue
        p.family[metric] = found


def _sla_window(p: _Pass, sla: dict) -> list[Series]:
    """Return an SLA's series over its lookback: from the pass's family read, else its own."""
    start = p.now - _lookback(sla)
    family = p.family.get(sla["metric"])
    if family is None:
        with p.engine.connect() as conn:
            return sla_series(conn=conn, sla=sla, start=start, end=p.now, source=p.source)
    selector = selector_from_labels(sla["metric"], sla.get("labels") or {})
    out = []
    for s in family:
        if selector.matches(s.name, s.labels):
            keep = (s.ts >= start) & (s.ts <= p.now)
            out.append(Series(s.name, s.labels, s.ts[keep], s.values[keep]))
    return out


IMPORTED_GRACE_S = 3600.0  # past an imported window's end by this, its incident is resolved


def _check(p: _Pass, sla: dict) -> None:
    """Open or resolve the incident of a threshold SLA from its series up to ``p.now``."""
    state = sla_state(_sla_window(p, sla), sla)
    name = sla["name"]
    p.report["slas"][name] = _say_state(state, sla, p.now)
    if state.breaching and state.start is not None:  # a breaching state has its start
        _open(p, sla, start=state.start)
    elif state.known and state.ok_since is not None:
        with write_transaction(p.engine) as conn:
            row = open_incident_for(conn=conn, sla=name)
            if row is None or state.ok_since < row.breach_start:
                return
            _resolve(p, conn, row.id, state.ok_since, recovered_note(sla, state.last_value))


def _resolve(p: _Pass, conn: Connection, incident_id: int, breach_end: float, note: str) -> None:
    """Resolve an incident as the evaluator, its message queued and ``note`` on it."""
    act = Act(incident_id, p.now, "evaluator", p.settings, p.source, note)
    if resolve_and_announce(conn=conn, act=act, breach_end=breach_end):
        p.report["resolved"].append(incident_id)


# Unit word a metric's name ends with -> how a value of it reads ("50 ms", "80%").
UNIT_SUFFIXES = {"ms": " ms", "milliseconds": " ms", "seconds": " s", "percent": "%", "bytes": " B"}


def _reads(metric: str, value: float) -> str:
    """Return a value of a metric as people read it: '50 ms', '0.25 s', '80%', '3'."""
    unit = UNIT_SUFFIXES.get(metric.lower().rsplit("_", 1)[-1], "")
    return f"{float(value):.4g}{unit}"


def recovered_note(sla: dict, value: float | None = None) -> str:
    """Return the note that says in words that an SLA's metric is back within its objective."""
    metric, threshold = sla["metric"], _reads(sla["metric"], sla["threshold"])
    back, bad = ("at or below", "above") if sla["op"] == ">" else ("at or above", "below")
    now = "" if value is None else f"last value {_reads(metric, value)}; "
    hold = float(sla.get("for_seconds") or 0)
    lasting = f" for {hold:g} s" if hold else ""
    return (
        f"SLA recovered: {metric} is back {back} {threshold} "
        f"({now}SLA: {bad} {threshold}{lasting} is a breach)"
    )


def _say_state(state, sla: dict, now: float) -> str:
    """Return the SLA's state as evaluated, in words."""
    if not state.known:
        return f"no data in the {_lookback(sla):g} s before {when(now)}"
    if state.breaching:
        return f"breaching since {when(state.start)}"
    return f"within its objective at {when(state.last_ts)} (value {state.last_value:g})"


def _close_imported(p: _Pass, sla: dict, windows: list[RecordedWindow]) -> None:
    """Resolve the SLA's open incident where its imported data ends, once past it.

    An incident opened from an imported window (``causeline import``, then evaluating a past
    time) gets no later data: it is resolved at the recovery its data shows, else at the
    window's end, once the evaluation time is IMPORTED_GRACE_S past that end.
    """
    name = sla["name"]
    with p.engine.connect() as conn:
        row = open_incident_for(conn=conn, sla=name)
    if row is None:
        return
    window = next((w for w in windows if w.start <= row.breach_start <= w.end), None)
    if window is None or p.now < window.end + IMPORTED_GRACE_S:
        return
    end, why = window.end, f"its data ends at {when(window.end)}"
    if sla.get("op") and sla.get("threshold") is not None:
        with p.engine.connect() as conn:
            found = sla_series(
                conn=conn, sla=sla, start=row.breach_start, end=window.end, source=p.source
            )
        state = sla_state(found, sla)
        if state.known and not state.breaching and state.ok_since is not None:
            end, why = max(state.ok_since, row.breach_start), "its data shows the recovery"
    note = f"Imported from {window.source}: resolved at {when(end)}, as {why}."
    with write_transaction(p.engine) as conn:
        _resolve(p, conn, row.id, end, note)


def _check_declared(p: _Pass, sla: dict, windows: list[RecordedWindow]) -> None:
    """Open the incident of an imported, declared breach ongoing at ``p.now``."""
    name = sla["name"]
    starts = [
        w.breach_start
        for w in windows
        if w.breach_start is not None and w.breach_start <= p.now <= w.end
    ]
    if not starts:
        p.report["slas"][name] = f"no declared breach ongoing at {when(p.now)}"
        return
    p.report["slas"][name] = f"declared breach since {when(max(starts))} (imported)"
    _open(p, sla, start=max(starts))


def _open(p: _Pass, sla: dict, *, start: float) -> None:
    """Open the SLA's incident for a breach since ``start`` unless this breach has had one."""
    name = sla["name"]
    try:
        with write_transaction(p.engine) as conn:
            if open_incident_for(conn=conn, sla=name) is not None:
                return
            if _known_breach(conn, name, start):
                return  # resolved already (by hand while it goes on, or it was imported)
            incident_id = open_incident(
                conn=conn,
                sla=name,
                severity=sla.get("severity") or DEFAULT_SEVERITY,
                breach_start=start,
                now=p.now,
                by=p.holder,
            )
    except IntegrityError:
        return  # another process opened it first
    p.report["opened"].append(incident_id)
    snap = build_snapshot(p.engine, sla_name=name, breach_start=start, now=p.now, source=p.source)
    with write_transaction(p.engine) as conn:
        snapshot_and_announce(
            conn=conn,
            incident_id=incident_id,
            snapshot=snap,
            now=p.now,
            settings=p.settings,
            event="opened",
            source=p.source,
        )


def _known_breach(conn: Connection, sla: str, start: float) -> bool:
    """Say whether a breach since ``start`` already had its incident (open or resolved)."""
    stmt = select(Incident.id).where(
        Incident.sla == sla,
        Incident.breach_start >= start - SAME_BREACH_S,
        Incident.breach_start <= start + SAME_BREACH_S,
    )
    if conn.execute(stmt).first() is not None:
        return True
    last = _last_resolved(conn, sla)  # resolved by hand while the same run goes on
    return (
        last is not None
        and start >= last.breach_start - SAME_BREACH_S
        and _same_breach(last, start)
    )


def _why_idle(report: dict) -> str:
    """Say why a pass opened and resolved nothing."""
    if not report["slas"]:
        return "no SLA is stored with a threshold or an imported declared breach"
    return "no SLA changed state: " + "; ".join(f"{k}: {v}" for k, v in report["slas"].items())


def evaluate_once(
    engine: Engine,
    *,
    holder: str,
    now: float | None = None,
    lease_seconds: float = 90.0,
    settings: ServiceSettings,
    source: MetricSource | None = None,
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
        "at": now,
        "opened": [],
        "resolved": [],
        "checked": 0,
        "slas": {},
    }
    if not held:
        with engine.connect() as conn:
            other = lease_holder(conn=conn, name=LEASE, now=time.time())
        report["reason"] = (
            f"the evaluator lease is held by {other or 'another process'}: that process "
            "evaluates every few seconds; to evaluate a past time, ask it "
            "(POST /api/v1/evaluate?at=T) or stop it"
        )
        return report
    began = time.perf_counter()
    with engine.connect() as conn:
        slas = list_slas(conn=conn)
        declared: dict[str, list[RecordedWindow]] = {}
        recorded: dict[str, list[RecordedWindow]] = {}
        for w in list_recordings(conn=conn):
            recorded.setdefault(w.sla, []).append(w)
            if w.breach_start is not None:
                declared.setdefault(w.sla, []).append(w)
    p = _Pass(engine, now, holder, report, settings, source)
    _prefetch(p, slas)
    for sla in slas:
        name = sla["name"]
        threshold = bool(sla.get("op")) and sla.get("threshold") is not None
        if not threshold and name not in declared:
            continue
        try:
            if threshold:
                _check(p, sla)
            else:
                _check_declared(p, sla, declared[name])
            if name in recorded:
                _close_imported(p, sla, recorded[name])
        except Exception as exc:  # one bad SLA must not stop the others
            log.exception("evaluating SLA %r failed", name)
            report["slas"][name] = f"failed: {exc}"
        report["checked"] += 1
    try:
        report["escalated"] = escalate_due(
            engine, now=now, settings=settings, source=source, slas=slas
        )
    except Exception:  # the SLA checks above stand; the next pass tries again
        log.exception("escalating unacknowledged incidents failed")
    if not report["opened"] and not report["resolved"]:
        report["reason"] = _why_idle(report)
    report["seconds"] = round(time.perf_counter() - began, 3)
    return report


async def run_evaluator(
    engine: Engine,
    *,
    interval: float,
    lease_seconds: float,
    holder: str | None = None,
    settings: ServiceSettings,
    source: MetricSource | None = None,
    stats: PassStats | None = None,
) -> None:
    """Evaluate every ``interval`` seconds until cancelled, then give the lease up.

    Each pass is counted in ``stats``; one that takes longer than ``interval`` is logged
    as a warning (the next starts ``interval`` after it ends, so checks fall behind).

    On a clean stop another replica, or ``causeline incident evaluate``, takes over at once
    instead of after ``lease_seconds``: the pass in flight may finish first (up to
    ``RELEASE_WAIT_S``); one still running then keeps the lease until it expires.
    """
    holder = holder or holder_name()
    running: asyncio.Future | None = None
    try:
        while True:
            running = asyncio.ensure_future(
                asyncio.to_thread(
                    evaluate_once,
                    engine,
                    holder=holder,
                    lease_seconds=lease_seconds,
                    settings=settings,
                    source=source,
                )
            )
            try:
                report = await asyncio.shield(running)  # cancelling leaves the pass running
            except Exception:
                log.exception("SLA evaluation pass failed")
            else:
                _record(stats, report, interval)
            running = None  # finished and seen
            await asyncio.sleep(interval)
    finally:
        await _give_up_lease(engine, holder, running)


def _record(stats: PassStats | None, report: dict, interval: float) -> None:
    """Count a pass; warn when it took longer than the interval between passes."""
    if stats is not None:
        stats.record(report)
    took = report.get("seconds") or 0.0
    if took > interval:
        log.warning(
            "an SLA evaluation pass took %.1f s for %d SLAs, longer than the %.0f s interval: "
            "breaches are seen later than the interval says; check the metric source's and "
            "the database's latency",
            took,
            report.get("checked", 0),
            interval,
        )


async def _give_up_lease(engine: Engine, holder: str, running: asyncio.Future | None) -> None:
    """Release the evaluator lease once no pass of this holder runs; log, never raise.

    ``running`` is the pass the stop interrupted the wait for, if any.
    """
    if running is not None and not running.done():
        done, _ = await asyncio.wait({running}, timeout=RELEASE_WAIT_S)
        if not done:
            log.warning("an SLA pass still runs at shutdown: its lease expires on its own")
            return
    if running is not None and not running.cancelled() and running.exception():
        log.error("SLA evaluation pass failed", exc_info=running.exception())

    def release() -> None:
        with write_transaction(engine) as conn:
            release_lease(conn=conn, name=LEASE, holder=holder)

    try:
        await asyncio.to_thread(release)
    except Exception:
        log.exception("could not release the evaluator lease: it expires on its own")
