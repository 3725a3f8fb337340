"""Repository functions for on-call rotations and overrides, and who is on call."""

from __future__ import annotations

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from correlator.store.tables import OncallOverride, OncallRotation
from correlator.vocabulary import TEAMS


class RotationExists(ValueError):
    """A rotation with that name exists."""


def _member(m) -> dict:
    if isinstance(m, dict):
        return {"person": str(m.get("name") or m.get("person")), "contact": m.get("contact", "")}
    return {"person": str(m), "contact": ""}


def rotation_dict(row: OncallRotation) -> dict:
    """Return the API form of a rotation."""
    return {
        "id": row.id,
        "name": row.name,
        "team": row.team,
        "model": row.model,
        "members": row.members,
        "start": row.start,
        "period_days": row.period_seconds / 86400.0,
        "author": row.author,
    }


def override_dict(row: OncallOverride) -> dict:
    """Return the API form of an override."""
    return {
        "id": row.id,
        "team": row.team,
        "model": row.model,
        "person": row.person,
        "contact": row.contact,
        "start": row.start,
        "end": row.end,
        "reason": row.reason,
        "author": row.author,
    }


def add_rotation(*, conn: Connection, rotation: dict) -> dict:
    """Store a rotation; raise RotationExists on a taken name."""
    session = Session(conn)
    if session.scalars(
        select(OncallRotation).where(OncallRotation.name == rotation["name"])
    ).first():
        raise RotationExists(rotation["name"])
    row = OncallRotation(
        name=rotation["name"],
        team=rotation["team"],
        model=rotation.get("model") or "",
        members=rotation["members"],
        start=rotation["start"],
        period_seconds=round(rotation.get("period_days", 7) * 86400),
        author=rotation.get("author") or "",
    )
    session.add(row)
    session.flush()
    return rotation_dict(row)


def add_override(*, conn: Connection, override: dict) -> dict:
    """Store an override."""
    session = Session(conn)
    row = OncallOverride(
        team=override["team"],
        model=override.get("model") or "",
        person=override["person"],
        contact=override.get("contact") or "",
        start=override["start"],
        end=override["end"],
        reason=override.get("reason") or "",
        author=override.get("author") or "",
    )
    session.add(row)
    session.flush()
    return override_dict(row)


def list_rotations(*, conn: Connection) -> list[dict]:
    """Return every rotation."""
    stmt = select(OncallRotation).order_by(OncallRotation.team, OncallRotation.name)
    return [rotation_dict(r) for r in Session(conn).scalars(stmt)]


def list_overrides(*, conn: Connection) -> list[dict]:
    """Return every override."""
    stmt = select(OncallOverride).order_by(OncallOverride.start)
    return [override_dict(r) for r in Session(conn).scalars(stmt)]


def pick_oncall(rotations: list[dict], overrides: list[dict], *, team: str, model: str, at: float):
    """Return who of a team is on call for a model at a time (override, then rotation)."""
    for o in sorted(overrides, key=lambda o: (o["model"] != model, -o["start"])):
        if o["team"] == team and o["model"] in ("", model) and o["start"] <= at < o["end"]:
            return {
                "person": o["person"],
                "contact": o["contact"],
                "source": "override",
                "until": o["end"],
                "reason": o["reason"],
            }
    for r in sorted(rotations, key=lambda r: (r["model"] != model, r["name"])):
        if r["team"] != team or r["model"] not in ("", model) or not r["members"]:
            continue
        period = r["period_days"] * 86400.0
        if at < r["start"] or period <= 0:
            continue
        n = int((at - r["start"]) // period)
        who = _member(r["members"][n % len(r["members"])])
        return who | {
            "source": "rotation",
            "rotation": r["name"],
            "until": r["start"] + (n + 1) * period,
        }
    return None


def escalation_chain(
    rotations: list[dict], overrides: list[dict], *, team: str, model: str, at: float
) -> list[dict]:
    """Return a team's contacts for a model at a time, in escalation order, each once.

    First whoever ``pick_oncall`` names (an override, else the rotation's current member),
    then the rotation's members after its current one: the next on call comes next.
    """
    out: list[dict] = []
    first = pick_oncall(rotations, overrides, team=team, model=model, at=at)
    if first is not None:
        out.append({"person": first["person"], "contact": first.get("contact", "")})
    for r in sorted(rotations, key=lambda r: (r["model"] != model, r["name"])):
        period = r["period_days"] * 86400.0
        if r["team"] != team or r["model"] not in ("", model) or not r["members"]:
            continue
        n = int((at - r["start"]) // period) if period > 0 and at >= r["start"] else 0
        members = r["members"]
        for k in range(len(members)):
            out.append(_member(members[(n + k) % len(members)]))
        break
    unique: dict[str, dict] = {}
    for contact in out:
        unique.setdefault(contact["person"], contact)  # each person once, first place kept
    return list(unique.values())


def who_is_on_call(*, conn: Connection, model: str, at: float) -> dict:
    """Return the algo and infra contacts on call for a model at a time."""
    rotations, overrides = list_rotations(conn=conn), list_overrides(conn=conn)
    out = {"model": model, "at": at}
    for team in TEAMS:
        out[team] = pick_oncall(rotations, overrides, team=team, model=model, at=at)
    return out
