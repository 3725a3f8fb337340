"""Repository functions for changes: the bundle import, the change calendar, its queries.

One mapping writes a change (``_values``) and one reads it (``change_dict``); the calendar's
form adds every process column, a status and the unplanned flag to the same dict.
"""

from __future__ import annotations

import uuid

from sqlalchemy import Connection, or_, select
from sqlalchemy.orm import Session

from correlator.store.dialect import upsert_insert
from correlator.store.millis import as_written
from correlator.store.tables import Change

PLANNED_AHEAD_S = 24 * 3600
# Process fields kept in their own columns, left out of the bundle form while unset.
COLUMNS = ("person", "scope", "rollout_stage", "canary_percent", "version", "author")
TIMES = ("ts", "planned_ts", "registered_at")  # unix seconds (Millis columns)
# The process fields a stored change reads back when set: COLUMNS and its plan's times.
PROCESS_COLUMNS = (*COLUMNS, "planned_ts", "registered_at")
# Fields with a column that always has a value; an unset or null one stores "" ({} for labels).
TEXTS = ("kind", "target", "summary", "owner")
FIELDS = ("id", "extra", "labels", *TIMES, *TEXTS, *COLUMNS)


class ChangeExists(ValueError):
    """A change with that id is already stored."""


def _values(change: dict) -> dict:
    """Return the column values of the fields a change holds.

    Fields without a column (a bundle's own) and ``extra`` (outside facts, such as a
    deploy's pipeline link) go to ``extra``.
    """
    values = {k: change[k] for k in (*TIMES, *COLUMNS) if k in change}
    values |= {k: "" if change[k] is None else change[k] for k in TEXTS if k in change}
    if "labels" in change:
        values["labels"] = change["labels"] or {}
    extra = {k: v for k, v in change.items() if k not in FIELDS} | (change.get("extra") or {})
    if extra:
        values["extra"] = extra
    return values


def change_dict(row: Change) -> dict:
    """Return the bundle form of a stored change (unset process fields left out)."""
    out = {
        "id": row.id,
        "ts": as_written(row.ts),
        "kind": row.kind,
        "target": row.target,
        "summary": row.summary,
        "owner": row.owner,
        "labels": row.labels,
    }
    for key in PROCESS_COLUMNS:
        if getattr(row, key) is not None:
            out[key] = getattr(row, key)
    return out | (row.extra or {})


def is_unplanned(*, ts: float | None, registered_at: float | None) -> bool:
    """Say whether a change happened without being registered a day ahead."""
    if ts is None:
        return False
    return registered_at is None or ts - registered_at < PLANNED_AHEAD_S


def calendar_dict(row: Change) -> dict:
    """Return a stored change with every process field, its status and unplanned flag."""
    out = change_dict(row)
    for key in PROCESS_COLUMNS:
        out.setdefault(key, getattr(row, key))
    out["status"] = "planned" if row.ts is None else "done"
    out["unplanned"] = is_unplanned(ts=out["ts"], registered_at=out["registered_at"])
    return out


def upsert_changes(*, conn: Connection, changes: list[dict]) -> int:
    """Insert or replace changes (a bundle's) by id; return how many were given."""
    if not changes:
        return 0
    unset = dict.fromkeys((*TIMES, *COLUMNS)) | dict.fromkeys(TEXTS, "")
    rows = [unset | {"labels": {}, "extra": {}} | _values(c) | {"id": c["id"]} for c in changes]
    stmt = upsert_insert(conn, Change)
    stmt = stmt.on_conflict_do_update(
        index_elements=["id"], set_={k: stmt.excluded[k] for k in rows[0] if k != "id"}
    )
    conn.execute(stmt, rows)
    return len(rows)


def _apply(row: Change, fields: dict) -> None:
    """Set the fields given on a stored change; outside facts are merged into ``extra``."""
    for key, value in _values(fields).items():
        setattr(row, key, {**(row.extra or {}), **value} if key == "extra" else value)


def add_change(*, conn: Connection, change: dict, now: float) -> dict:
    """Register a change (planned or done) and return it; raise ChangeExists on a taken id."""
    session = Session(conn)
    change_id = change.get("id") or f"chg-{uuid.uuid4().hex[:8]}"
    if session.get(Change, change_id) is not None:
        raise ChangeExists(change_id)
    row = Change(id=change_id, labels={}, extra={}, **dict.fromkeys(TEXTS, ""))
    _apply(row, change)
    row.registered_at = now
    session.add(row)
    session.flush()
    return calendar_dict(row)


def upsert_hook_change(*, conn: Connection, change: dict, now: float) -> dict:
    """Insert or update a change by id (or the planned one it carries out) for a pipeline."""
    session = Session(conn)
    row = session.get(Change, change["id"]) or _planned_match(session, change)
    if row is None:
        return add_change(conn=conn, change=change, now=now)
    _apply(row, {k: v for k, v in change.items() if k != "id" and v is not None})
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


def list_changes(
    *, conn: Connection, start: float | None = None, end: float | None = None
) -> list[dict]:
    """Return the bundle form of changes with start <= ts <= end (unix seconds), oldest first."""
    stmt = select(Change).order_by(Change.ts, Change.id)
    if start is not None:
        stmt = stmt.where(Change.ts >= start)
    if end is not None:
        stmt = stmt.where(Change.ts <= end)
    return [change_dict(c) for c in Session(conn).scalars(stmt)]


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
        stmt = stmt.where(
            or_(Change.ts >= start, Change.ts.is_(None) & (Change.planned_ts >= start))
        )
    if end is not None:
        stmt = stmt.where(or_(Change.ts <= end, Change.ts.is_(None) & (Change.planned_ts <= end)))
    for column, value in ((Change.kind, kind), (Change.owner, owner), (Change.target, target)):
        if value:
            stmt = stmt.where(column == value)
    rows = list(Session(conn).scalars(stmt))
    rows.sort(key=lambda r: (r.ts if r.ts is not None else (r.planned_ts or 0), r.id))
    return [calendar_dict(r) for r in rows]
