"""Build an incident's snapshot: ranked suspects, changes, scope, chain and on-call."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from correlator.analysis import AnalysisError, SlaMatchError, analyze
from correlator.analysis.confidence import say
from correlator.analysis.render import when
from correlator.incidents.advice import advise, runbook
from correlator.incidents.chain import build_chain
from correlator.incidents.headline import headline
from correlator.incidents.history import latest_breach
from correlator.incidents.scope import MAX_SERIES, scope_of
from correlator.promsource.reader import PromSourceError
from correlator.selector import selector_from_labels
from correlator.store.changes import query_changes
from correlator.store.oncall import who_is_on_call
from correlator.store.recordings import read_baseline, recording_at
from correlator.store.slas import get_sla
from correlator.store.topology import read_topology
from correlator.store.tsdb import find_series, time_bounds
from correlator.store.windows import MetricSource, bundle_for_sla
from correlator.vocabulary import TEAMS

if TYPE_CHECKING:
    from sqlalchemy import Connection


BEFORE_S = 4 * 3600.0
AFTER_S = 15 * 60.0
CLOCK_AHEAD_S = 3600.0  # samples up to this far ahead of the clock count as the newest data
log = logging.getLogger(__name__)


def sla_model(sla: dict) -> str:
    """Return the model an SLA protects ('' when none)."""
    return sla.get("model") or (sla.get("labels") or {}).get("model") or ""


def analyze_window(
    engine: Engine,
    sla: dict,
    *,
    at: float | None,
    end: float,
    given: bool = True,
    source: MetricSource | None = None,
) -> dict:
    """Run the analysis on the stored window of the breach at ``at`` (else the newest data).

    When ``at`` falls in an imported incident's window, that window and its baseline are
    read, so the store answers as the bundle did; else BEFORE_S before ``at`` to AFTER_S
    after it. ``given`` takes ``at`` as the breach start; otherwise the analysis looks for
    the breach ongoing at ``at``, as ``analyze BUNDLE --at`` does.
    """
    anchor = at if at is not None else end
    with engine.connect() as conn:
        recorded = recording_at(conn=conn, sla=sla["name"], at=anchor)
        if recorded is not None:
            start, stop = recorded.start, recorded.end
            baseline = read_baseline(conn=conn, recording_id=recorded.id)
        else:
            start, stop, baseline = anchor - BEFORE_S, min(end, anchor + AFTER_S), None

        def scope():  # worked out only for a store or source past MAX_SERIES
            return scope_of(sla, _own_labels(conn, sla), read_topology(conn=conn))

        bundle = bundle_for_sla(
            conn=conn,
            sla=sla,
            start=start,
            end=stop,
            source=source,
            scope=scope,
            max_series=MAX_SERIES,
        )
    bundle.baseline = baseline
    if given and at is not None:
        bundle.sla["breach_start"] = at
        result = analyze(bundle)
    else:
        result = analyze(bundle, at=at)
    result["window"] = {
        "start": start,
        "end": stop,
        "recording": recorded.source if recorded is not None else None,
        "baseline": baseline is not None,
    }
    if "scope" in bundle.extra:  # a store past MAX_SERIES: what was read, of what
        result["window"]["series_read"] = bundle.extra["scope"]
    return result


def _own_labels(conn: Connection, sla: dict) -> list[dict[str, str]]:
    """Return the label sets of the stored series the SLA covers (at most 1,000)."""
    selector = selector_from_labels(sla.get("metric") or None, sla.get("labels") or {})
    if selector.name is None and not selector.matchers:
        return []
    return [s.labels for s in find_series(conn=conn, selector=selector, limit=1000)]


def analyze_stored(
    engine: Engine, sla_name: str, at: float | None, *, source: MetricSource | None = None
) -> dict | None:
    """Analyse an SLA from stored data at ``at``, else at its latest breach; None if unknown."""
    with engine.connect() as conn:
        sla = get_sla(conn=conn, name=sla_name)
        # Samples stamped further ahead of the clock (one set wrong) do not move the search.
        bounds = time_bounds(conn=conn, not_after=time.time() + CLOCK_AHEAD_S)
    if sla is None:
        return None
    # The newest data: the store's newest sample, or now when Prometheus serves metrics too.
    end = bounds[1] if bounds is not None else None
    if source is not None:
        end = max(end or 0.0, time.time())
    if end is None:
        raise AnalysisError("no samples are stored up to an hour from now")
    how = "given"
    if at is None:
        past = latest_breach(engine, sla, end=end, source=source)
        if past is None:
            raise AnalysisError(
                f"no breach of SLA {sla_name!r} found in the stored data up to "
                f"{when(end)}; give the breach time with --at"
            )
        at, how = past.start, past.how
    result = analyze_window(engine, sla, at=at, end=end, given=False, source=source)
    result["window"]["breach"] = how
    return result


def build_snapshot(
    engine: Engine,
    *,
    sla_name: str,
    breach_start: float,
    now: float,
    source: MetricSource | None = None,
) -> dict:
    """Return the incident snapshot for an SLA breach, with the analysis run on stored data."""
    with engine.connect() as conn:
        sla = get_sla(conn=conn, name=sla_name) or {"name": sla_name, "metric": "", "labels": {}}
        topology = read_topology(conn=conn)
        changes = query_changes(
            conn=conn, start=breach_start - BEFORE_S, end=max(now, breach_start)
        )
        oncall = who_is_on_call(conn=conn, model=sla_model(sla), at=now)
    snap: dict = {"changes": changes, "oncall": {k: oncall[k] for k in TEAMS}}
    try:
        result = analyze_window(
            engine, sla, at=breach_start, end=max(now, breach_start), source=source
        )
    except (AnalysisError, SlaMatchError, ValueError, PromSourceError) as exc:
        log.warning("analysis of %r failed: %s", sla_name, exc)
        result = {"suspects": [], "scope": None}
        snap["analysis_error"] = str(exc)
    snap["suspects"] = advise(
        result.get("suspects") or [], changes=changes, oncall=snap["oncall"], model=sla_model(sla)
    )
    snap["runbook"] = runbook(sla)
    snap["scope"] = result.get("scope")
    snap["confidence"] = result.get("confidence")
    snap["confidence_says"] = (
        say(snap["confidence"], unlike=bool(result.get("confidence_unlike")))
        if snap["confidence"] is not None
        else None
    )
    snap["breach_end"] = result.get("breach_end")
    window = result.get("window") or {}
    snap["imported"] = (  # an imported incident: where from, and the window its data holds
        {"source": window["recording"], "start": window["start"], "end": window["end"]}
        if window.get("recording")
        else None
    )
    snap["chain"] = build_chain(snap["suspects"], sla=sla, topology=topology)
    snap["headline"] = headline(snap)
    return snap
