"""Plain-text pieces of a message, shared by the chat formats."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from correlator.alerts.messages import Message
from correlator.analysis.evidence import duration as said_duration
from correlator.analysis.evidence import elapsed


def when(ts: float | None) -> str:
    """Return a unix time as 'YYYY-MM-DD HH:MM:SS UTC'."""
    if ts is None:
        return "?"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def facts(message: Message) -> list[tuple[str, str]]:
    """Return the (name, value) facts every channel shows, the next step near the top."""
    out = [("SLA", message.condition), ("Value", message.value_line)]
    top = message.suspects[0] if message.suspects else None
    if top is not None and top.next_step and message.event != "resolved":
        ask = f" (ask {top.person})" if top.person else ""
        out.append(("Next step", f"{top.next_step.rstrip('.')}{ask}"))
    out.append(("Since", when(message.since)))
    if message.event == "resolved":
        length = message.duration_seconds
        out.append(("Duration", "?" if length is None else elapsed(length)))
    out.append(("Scope", message.scope))
    out.append(("On call", f"algo: {message.oncall['algo']}; infra: {message.oncall['infra']}"))
    return out


def suspect_lines(message: Message) -> list[str]:
    """Return one line per top suspect (the final one only, on resolve)."""
    suspects = message.suspects[:1] if message.event == "resolved" else message.suspects
    out = []
    for s in suspects:
        # Said as the evidence says it ("4 min", not 239 s floored to "3 min").
        lead = f", {said_duration(s.lead_seconds)} before" if s.lead_seconds else ""
        line = f"{s.rank}. {s.what} [owner {s.owner}{lead}]"
        line = f"{line}: {s.evidence.rstrip('.')}." if s.evidence else line
        if s.next_step and message.event != "resolved":
            ask = f" (ask {s.person})" if s.person else ""
            line = f"{line} Next: {s.next_step.rstrip('.')}{ask}."
        out.append(line)
    return out or ["no suspect ranked (see the incident)"]


def change_lines(message: Message) -> list[str]:
    """Return one line per change in the window, newest first."""
    return [
        f"{when(c.ts)} {c.kind} ({c.owner}){' UNPLANNED' if c.unplanned else ''}: {c.summary}"
        for c in message.changes
    ] or ["none"]


def markdown(
    message: Message,
    *,
    bold: Callable[[str], str] = lambda t: f"**{t}**",
    link: Callable[[str, str], str] = lambda text, url: f"[{text}]({url})",
    heading: str = "### ",
    actions: bool = True,
) -> str:
    """Return the whole message as markdown in a platform's dialect (actions as links)."""
    parts = [f"{heading}{message.title}", ""]
    parts += [f"- {bold(name)}: {value}" for name, value in facts(message)]
    label = "Final top suspect" if message.event == "resolved" else "Top suspects"
    parts += ["", bold(label)] + [f"- {line}" for line in suspect_lines(message)]
    if message.event != "resolved":
        parts += ["", bold("Changes in the window")]
        parts += [f"- {line}" for line in change_lines(message)]
    parts += [
        "",
        f"{link('Board at the breach', message.board_url)} | "
        f"{link('Incident ' + str(message.incident_id), message.incident_url)}",
    ]
    if actions and message.actions:
        parts.append(" | ".join(link(a.label, a.url) for a in message.actions))
    return "\n".join(parts)
