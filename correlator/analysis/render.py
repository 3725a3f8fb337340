"""The terminal form of an analysis: the breach, then the top suspects with evidence."""

from __future__ import annotations

from datetime import UTC, datetime


def when(ts: float | None) -> str:
    """Return a time as people read it in UTC ('-' when unknown)."""
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def render_text(result: dict, *, top: int = 10) -> str:
    """Return the analysis as lines a person reads in a terminal."""
    lines = [f"SLA: {result.get('sla')}"]
    if result.get("breach_start") is None:
        lines.append("Breach: none found in the data")
        return "\n".join(lines) + "\n"
    how = "given" if result.get("breach_given") else "found"
    end = result.get("breach_end")
    lines.append(
        f"Breach: {when(result['breach_start'])} ({how})"
        + (f", back to normal {when(end)}" if end else ", not over in the data")
    )
    sc = result.get("scope") or {}
    where = ", ".join(f"{k}={v}" for k, v in sc.get("labels", {}).items())
    if sc.get("kind") == "local":
        lines.append(f"Scope: local ({where})")
    elif sc.get("kind") == "single":
        on = f" ({where})" if where else ""
        lines.append(f"Scope: the SLA has one series{on}, so local or global cannot be told")
    elif sc and not sc.get("affected"):
        lines.append(f"Scope: global (no one of the SLA's {sc.get('series')} series stands out)")
    elif sc:
        lines.append(f"Scope: global ({sc.get('affected')} of {sc.get('series')} series)")
    suspects = result.get("suspects", [])[:top]
    if not suspects:
        lines.append("No suspects: nothing in scope moved before the breach.")
        return "\n".join(lines) + "\n"
    lines.append("")
    lines.append(f"{'#':>2}  {'score':>5}  {'owner':5}  {'kind':6}  suspect")
    for s in suspects:
        if s["kind"] == "change":
            name = f"{s['id']} ({s.get('change_kind', 'change')} on {s.get('target', '?')})"
        else:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.get("labels", {}).items()))
            name = f"{s['metric']}{{{labels}}}"
        lines.append(f"{s['rank']:>2}  {s['score']:5.2f}  {s['owner']:5}  {s['kind']:6}  {name}")
        lines.append(f"{'':24}{s['evidence']}")
    return "\n".join(lines) + "\n"
