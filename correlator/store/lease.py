"""A database lease: one holder at a time, taken by an atomic conditional UPDATE."""

from __future__ import annotations

from sqlalchemy import Connection, or_, select, update

from correlator.store.dialect import upsert_insert
from correlator.store.tables import Lease


def take_lease(*, conn: Connection, name: str, holder: str, now: float, seconds: float) -> bool:
    """Take or renew the lease until now + seconds; return whether this holder has it."""
    conn.execute(
        upsert_insert(conn, Lease)
        .values(name=name, holder="", expires_at=0)
        .on_conflict_do_nothing(index_elements=["name"])
    )
    result = conn.execute(
        update(Lease)
        .where(Lease.name == name, or_(Lease.expires_at <= now, Lease.holder == holder))
        .values(holder=holder, expires_at=now + seconds)
    )
    return result.rowcount == 1


def release_lease(*, conn: Connection, name: str, holder: str) -> None:
    """Give the lease up if this holder has it."""
    conn.execute(
        update(Lease).where(Lease.name == name, Lease.holder == holder).values(expires_at=0)
    )


def lease_holder(*, conn: Connection, name: str, now: float) -> str | None:
    """Return who holds the lease now, or None."""
    row = conn.execute(select(Lease.holder, Lease.expires_at).where(Lease.name == name)).first()
    if row is None or row.expires_at <= now:
        return None
    return row.holder
