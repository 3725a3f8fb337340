"""Repository functions for environment fingerprints."""

from __future__ import annotations

import hashlib

import orjson
from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from correlator.store.dialect import upsert_insert
from correlator.store.tables import Fingerprint


def fingerprint_digest(body: dict) -> str:
    """Return a stable SHA-256 of a fingerprint body."""
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def add_fingerprint(
    *, conn: Connection, host: str, instance: str, model: str, ts: float, body: dict
) -> bool:
    """Store a fingerprint unless the same one is stored; return whether it was new."""
    stmt = (
        upsert_insert(conn, Fingerprint)
        .on_conflict_do_nothing(index_elements=["host", "instance", "model", "digest"])
        .returning(Fingerprint.id)
    )
    row = {
        "host": host,
        "instance": instance,
        "model": model,
        "ts": ts,
        "digest": fingerprint_digest(body),
        "body": body,
    }
    # A row comes back only when one was inserted; rowcount said "none" for a new row on
    # PostgreSQL, so the answer no longer depends on it.
    return conn.execute(stmt, row).first() is not None


def _out(row: Fingerprint) -> dict:
    return {
        "id": row.id,
        "host": row.host,
        "instance": row.instance or None,
        "model": row.model or None,
        "ts": row.ts,
        "digest": row.digest,
        "fingerprint": row.body,
    }


def latest_fingerprint(
    *, conn: Connection, host: str, instance: str | None = None, model: str | None = None
) -> dict | None:
    """Return the newest fingerprint of a host (and instance/model when given)."""
    stmt = select(Fingerprint).where(Fingerprint.host == host)
    if instance is not None:
        stmt = stmt.where(Fingerprint.instance == instance)
    if model is not None:
        stmt = stmt.where(Fingerprint.model == model)
    row = Session(conn).scalars(stmt.order_by(Fingerprint.ts.desc(), Fingerprint.id.desc())).first()
    return _out(row) if row else None


def list_fingerprints(*, conn: Connection, host: str | None = None) -> list[dict]:
    """Return fingerprints, newest first, optionally of one host."""
    stmt = select(Fingerprint).order_by(Fingerprint.ts.desc(), Fingerprint.id.desc())
    if host is not None:
        stmt = stmt.where(Fingerprint.host == host)
    return [_out(r) for r in Session(conn).scalars(stmt)]
