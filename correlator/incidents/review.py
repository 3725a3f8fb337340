"""Render an incident as a Markdown post-incident review (timeline, triggers, actions)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from correlator.analysis.evidence import elapsed
from correlator.records.incident import IncidentRecord
from correlator.vocabulary import TEAMS

TIMELINE_SUSPECTS = 5
# Line breaks of every kind and other control characters: user text stays on its line.
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")
# Characters that open code, emphasis, links, HTML, entities or strikethrough, or end a
# table cell: backslash-escaped, as CommonMark allows for any ASCII punctuation, so the raw
# text stays readable ("0/min -> 7/min", not "-&gt;").
_SPECIAL = re.compile(r"([\\`*\[\]|~<&])")
_LEADING = re.compile(r"^([#+>-])|^(\d+)([.)])")


def md(value: object) -> str:
    """Return user text as inert Markdown on one line: no heading, fence, table cell or HTML."""
    text = _BREAKS.sub(" ", str(value)).strip()
    text = _SPECIAL.sub(r"\\\1", text)
    return _LEADING.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", text)


def _t(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _dur(seconds: float | None) -> str:
    return "ongoing" if seconds is None else elapsed(seconds)  # as the chat messages say it


def _scope(scope: dict | None) -> str:
    if not scope:
        return "unknown"
    where = ", ".join(f"{md(k)}={md(v)}" for k, v in (scope.get("labels") or {}).items())
    return md(scope.get("kind", "?")) + (f" ({where})" if where else "")


def _name(s: dict) -> str:
    if s.get("kind") == "change":
        return f"change {md(s.get('id'))}"
    labels = ", ".join(f"{md(k)}={md(v)}" for k, v in sorted((s.get("labels") or {}).items()))
    return f"{md(s.get('metric'))}{{{labels}}}"


def _trigger(top: dict | None) -> str:
    return f"{_name(top)} - {md(top.get('evidence', ''))}" if top else "not found"


def _timeline(inc: IncidentRecord) -> list[tuple[float, str]]:
    rows = [(inc["breach_start"], f"**SLA breached**: {md(inc['sla'])}")]
    for c in inc.get("changes") or []:
        when = c.get("ts") if c.get("ts") is not None else c.get("planned_ts")
        if when is None:
            continue
        flag = " (unplanned)" if c.get("unplanned") else ""
        who = md(c.get("person") or c.get("owner") or "")
        what = f"change {md(c['id'])} \\[{md(c.get('kind'))}\\] {md(c.get('summary') or '')}"
        rows.append((when, f"{what} by {who}{flag}"))
    for s in (inc.get("suspects") or [])[:TIMELINE_SUSPECTS]:
        if s.get("kind") == "series" and s.get("onset") is not None:
            rows.append((s["onset"], f"anomaly onset: {_name(s)} (suspect #{s.get('rank')})"))
    for n in inc.get("notes") or []:
        rows.append((n["ts"], f"note by {md(n['author'])} ({md(n['team'])}): {md(n['text'])}"))
    recovered, resolved = inc.get("breach_end"), inc.get("resolved_at")
    if recovered is not None:
        rows.append((recovered, "SLA recovered"))
    if resolved is not None:
        rows.append((resolved, f"incident resolved by {md(inc.get('resolved_by') or '?')}"))
    return sorted(rows, key=lambda r: r[0])


def render_review(inc: IncidentRecord) -> str:
    """Return the Markdown review of an incident."""
    suspects = inc.get("suspects") or []
    top = suspects[0] if suspects else None
    end = inc.get("breach_end") or inc.get("resolved_at")
    lines = [
        f"# Post-incident review: incident {md(inc['id'])} - {md(inc['sla'])}",
        "",
        "## Summary",
        "",
        f"- SLA: **{md(inc['sla'])}** (severity {md(inc.get('severity', '?'))}), "
        f"status {md(inc['status'])}",
        f"- Breach: {_t(inc['breach_start'])} -> {_t(end)} "
        f"({_dur(end - inc['breach_start'] if end else None)})",
        f"- Most likely trigger: {_trigger(top)}",
        "",
        "## Impact",
        "",
        f"- Scope: {_scope(inc.get('scope'))}",
        f"- Duration: {_dur(end - inc['breach_start'] if end else None)}",
    ]
    oncall = inc.get("oncall") or {}
    for team in TEAMS:
        who = oncall.get(team)
        lines.append(f"- On call ({team}): {md(who['person']) if who else 'nobody'}")
    if inc.get("runbook"):
        lines.append(f"- Runbook: {md(inc['runbook'])}")
    lines += ["", "## Timeline", "", "| time (UTC) | event |", "| --- | --- |"]
    for when, text in _timeline(inc):
        lines.append(f"| {_t(when)} | {text} |")
    lines += ["", "## Triggers and contributing factors", ""]
    if not suspects:
        lines.append("No suspect was ranked from the stored data.")
    for s in suspects[:5]:
        role = "Trigger" if s is top else "Contributing factor"
        lines.append(
            f"{s.get('rank')}. **{role}**: {_name(s)} (score {s.get('score')}, owner "
            f"{md(s.get('owner'))}, lead {s.get('lead_seconds')} s). "
            f"Evidence: {md(s.get('evidence', '')).rstrip('.')}."
            + (f" Next step: {md(s['next_step']).rstrip('.')}." if s.get("next_step") else "")
        )
    lines += ["", "## Chain (input -> model -> output -> downstream)", ""]
    for seg in inc.get("chain") or []:
        lines.append(
            f"- {md(seg['segment'])}: {md(seg.get('component') or 'none named')} - owner "
            f"{md(seg['owner'])}, {md(seg['status'])}"
            + (f": {md(seg['evidence'])}" if seg.get("evidence") else "")
        )
    lines += ["", "## Action items", "", "| action | owner |", "| --- | --- |"]
    for action, owner in action_items(inc):
        lines.append(f"| {action} | {md(owner)} |")
    return "\n".join(lines) + "\n"


def action_items(inc: IncidentRecord) -> list[tuple[str, str]]:
    """Return improvement actions with owners, from the suspects and changes."""
    items = []
    for s in (inc.get("suspects") or [])[:3]:
        if float(s.get("score", 0)) < 0.3:
            continue
        owner = s.get("owner") or "algo"
        if s.get("kind") == "change":
            items.append(
                (f"Review change {md(s['id'])}: add a canary/shadow gate or rollback check", owner)
            )
        elif "input" in (s.get("metric") or "") or "feature" in (s.get("metric") or ""):
            items.append(
                (f"Alert on drift of {_name(s)} and document the input distribution", owner)
            )
        else:
            items.append((f"Add an alert and a runbook entry for {_name(s)}", owner))
    if any(c.get("unplanned") for c in inc.get("changes") or []):
        items.append(("Register changes in the calendar one day ahead", "algo + infra"))
    items.append(("Confirm the SLA document and capacity plan still hold", "algo + infra"))
    return items
