"""The answer in one sentence: the top suspect, where, when, its owner, the next step."""

from __future__ import annotations

from correlator.analysis.confidence import UNLIKE, UNSEEN_WHY, say
from correlator.analysis.evidence import clock, describe, duration


def _what(top: dict) -> str:
    if top.get("kind") == "change":
        return f"change {top.get('id') or '?'}"
    return describe(str(top.get("metric") or "?"), top.get("labels") or {})


def _when(top: dict) -> str:
    onset, lead = top.get("onset"), top.get("lead_seconds")
    if onset is None:
        return ""
    said = f"from {clock(float(onset))} UTC"
    if lead is not None:
        lead = float(lead)
        said += (
            f", {duration(lead)} before the breach"
            if lead > 0
            else " with the breach"
            if lead == 0
            else f", {duration(lead)} after the breach began"
        )
    return said


def headline(snapshot: dict) -> str:
    """Return an incident's answer in one sentence, as the page and the review open with."""
    suspects = snapshot.get("suspects") or []
    if not suspects:
        why = snapshot.get("analysis_error") or "nothing moved before the breach in the stored data"
        return f"No suspect ranked: {why}."
    top = suspects[0]
    p = snapshot.get("confidence")
    said = (snapshot.get("confidence_says") or say(p)) if isinstance(p, int | float) else ""
    if said == "likely":
        opening = f"Most likely ({p:.0%})"
    elif said == "possible":
        opening = f"Possibly ({p:.0%})"
    elif said == UNLIKE:
        opening = f"Unsure ({UNSEEN_WHY}), compare the top 3; first"
    elif said:
        opening = f"Unsure ({p:.0%}), compare the top 3; first"
    else:
        opening = "Top suspect"
    parts = [f"{opening}: {_what(top)}"]
    when = _when(top)
    if when:
        parts[0] += f", {when}"
    owner = top.get("owner")
    if owner:
        ask = f" (ask {top['person']})" if top.get("person") else ""
        parts.append(f"owner {owner}{ask}")
    if top.get("next_step"):
        parts.append(f"next: {str(top['next_step']).rstrip('.')}")
    return "; ".join(parts) + "."
