"""The rotation form: turn field values into the body of a new on-call rotation."""

from __future__ import annotations

import re

from dashboard.timeparse import parse_when

TEAMS = ("algo", "infra")
FIELDS = ("name", "team", "model", "members", "start", "period_days")
MAX_PERIOD_DAYS = 3650  # as the service's bound
_MEMBER = re.compile(r"([^<>]*?)\s*(?:<([^<>]*)>)?")


def parse_members(text: str) -> list[dict]:
    """Parse ``li.wei <@li.wei>, chen.yu`` into members in turn; raise ValueError on a bad one."""
    out = []
    for part in (text or "").split(","):
        if not part.strip():
            continue
        m = _MEMBER.fullmatch(part.strip())
        if m is None or not m.group(1):
            raise ValueError(f"{part.strip()!r} is not a name, optionally followed by <contact>")
        out.append({"name": m.group(1), "contact": (m.group(2) or "").strip()})
    return out


def rotation_body(values: dict, now: float) -> tuple[dict, dict[str, str]]:
    """Return the rotation to post from the form's values, and the errors by field."""
    text = {k: str(values.get(k) or "").strip() for k in FIELDS}
    errors: dict[str, str] = {}
    if not text["name"]:
        errors["name"] = "name the rotation, e.g. ranker infra"
    if text["team"] not in TEAMS:
        errors["team"] = "pick algo or infra"
    try:
        members = parse_members(text["members"])
    except ValueError as exc:
        members, errors["members"] = [], str(exc)
    else:
        if not members:
            errors["members"] = "at least one person, e.g. li.wei <@li.wei>, chen.yu"
    start = parse_when(text["start"], now=now) if text["start"] else now
    if start is None:
        errors["start"] = "a time such as now, now-2d or 2024-12-02T09:00Z"
    try:
        period = float(text["period_days"] or 7)
    except ValueError:
        period = None
    if period is None or not 0 < period <= MAX_PERIOD_DAYS:
        errors["period_days"] = f"days, a number above 0 and up to {MAX_PERIOD_DAYS}"
    body = {
        "name": text["name"],
        "team": text["team"],
        "model": text["model"],
        "members": members,
        "start": start,
        "period_days": period,
    }
    return body, errors
