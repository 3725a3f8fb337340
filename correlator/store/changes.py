"""Repository functions for the change calendar: register, update, query changes."""

from __future__ import annotations

import uuid

from sqlalchemy import Connection, or_, select
from sqlalchemy.orm import Session

from correlator.store.catalog import change_dict
from correlator.store.tables import Change

PLANNED_AHEAD_S = 24 * 3600
# Process fields kept in their own columns; times among them are unix seconds in dicts.
COLUMNS = ("person", "scope", "rollout_stage", "canary_percent", "version", "author")
TIMES = ("planned_ts", "registered_at")
BASIC = ("kind", "target", "summary", "owner", "labels")


class ChangeExists(ValueError):
    """A change with that id is already stored."""


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def is_unplanned(*, ts: float | None, registered_at: float | None) -> bool:
    """Say whether a change happened without being registered a day ahead."""
    if ts is None:
        return False
    return registered_at is None or ts - registered_at < PLANNED_AHEAD_S


def calendar_dict(row: Change) -> dict:
    """Return a stored change with its status and unplanned flag."""
    out = change_dict(row)
    for key in COLUMNS:
        out.setdefault(key, getattr(row, key))
    for key in TIMES:
        value = getattr(row, key)
        out.setdefault(key, None if value is None else value / 1000.0)
    out["status"] = "planned" if row.ts is None else "done"
    out["unplanned"] = is_unplanned(ts=out["ts"], registered_at=out["registered_at"])
    return out


def _apply(row: Change, fields: dict) -> None:
    for key in BASIC + COLUMNS:
        if key in fields:
            setattr(row, key, fields[key] if fields[key] is not None or key in COLUMNS else "")
    if "labels" in fields:
        row.labels = fields["labels"] or {}
    if fields.get("extra"):  # outside facts (a deploy's pipeline link), merged
        row.extra = {**(row.extra or {}), **fields["extra"]}
    for key in ("ts", "planned_ts"):
        if key in fields:
            setattr(row, key, _ms(fields[key]))


def add_change(*, conn: Connection, change: dict, now: float) -> dict:
    """Register a change (planned or done) and return it; raise ChangeExists on a taken id."""
    session = Session(conn)
    change_id = change.get("id") or f"chg-{uuid.uuid4().hex[:8]}"
    if session.get(Change, change_id) is not None:
        raise ChangeExists(change_id)
    row = Change(id=change_id, labels={}, extra={}, target="", summary="", owner="")
    _apply(row, change)
    row.registered_at = _ms(now)
    session.add(row)
    session.flush()
    return calendar_dict(row)


def upsert_hook_change(*, conn: Connection, change: dict, now: float) -> dict:
    """Insert or update a change by id (or the planned one it carries out) for a pipeline."""
    session = Session(conn)
    row = session.get(Change, change["id"]) or _planned_match(session, change)
    if row is None:
        return add_change(conn=conn, change=change, now=now)
    change = {k: v for k, v in change.items() if k != "id" and v is not None}
    _apply(row, change)
    session.flush()
    return calendar_dict(row)


def _planned_match(session: Session, change: dict) -> Change | None:
    """Return the registered, not yet done change a pipeline's deploy carries out."""
    stmt = select(Change).where(
        Change.ts.is_(None),
        Change.kind == change["kind"],
        Change.target == change["target"],
        Change.version == change.get("version"),
    )
    return session.scalars(stmt.order_by(Change.planned_ts)).first()


def update_change(*, conn: Connection, change_id: str, fields: dict) -> dict | None:
    """Update some fields of a change; return it, or None when unknown."""
    session = Session(conn)
    row = session.get(Change, change_id)
    if row is None:
        return None
    _apply(row, fields)
    session.flush()
    return calendar_dict(row)


def get_change(*, conn: Connection, change_id: str) -> dict | None:
    """Return one change, or None."""
    row = Session(conn).get(Change, change_id)
    return calendar_dict(row) if row else None


def query_changes(
    *,
    conn: Connection,
    start: float | None = None,
    end: float | None = None,
    kind: str | None = None,
    owner: str | None = None,
    target: str | None = None,
) -> list[dict]:
    """Return changes done (or, not yet done, planned) in [start, end], oldest first."""
    stmt = select(Change)
    if start is not None:
        lo = _ms(start)
        stmt = stmt.where(or_(Change.ts >= lo, (Change.ts.is_(None)) & (Change.planned_ts >= lo)))
    if end is not None:
        hi = _ms(end)
        stmt = stmt.where(or_(Change.ts <= hi, (Change.ts.is_(None)) & (Change.planned_ts <= hi)))
    for column, value in ((Change.kind, kind), (Change.owner, owner), (Change.target, target)):
        if value:
            stmt = stmt.where(column == value)
    rows = list(Session(conn).scalars(stmt))
    rows.sort(key=lambda r: (r.ts if r.ts is not None else (r.planned_ts or 0), r.id))
    return [calendar_dict(r) for r in rows]
