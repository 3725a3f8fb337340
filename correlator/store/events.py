"""Repository functions for point events on the timeline."""

from __future__ import annotations

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from collector.schema import Event
from correlator.store.dialect import upsert_insert
from correlator.store.tables import Event as EventRow


def insert_events(*, conn: Connection, events: list[Event]) -> int:
    """Insert events once per id; return how many were new."""
    if not events:
        return 0
    rows = [
        {
            "id": e.id,
            "ts": e.ts,
            "kind": e.kind,
            "summary": e.summary,
            "labels": e.labels,
        }
        for e in events
    ]
    stmt = upsert_insert(conn, EventRow).on_conflict_do_nothing().returning(EventRow.id)
    return len(conn.execute(stmt, rows).all())


def list_events(*, conn: Connection, start: float, end: float) -> list[dict]:
    """Return events with start <= ts <= end (unix seconds), oldest first."""
    stmt = select(EventRow).where(EventRow.ts >= start, EventRow.ts <= end).order_by(EventRow.ts)
    return [
        {"id": e.id, "ts": e.ts, "kind": e.kind, "summary": e.summary, "labels": e.labels}
        for e in Session(conn).scalars(stmt)
    ]
