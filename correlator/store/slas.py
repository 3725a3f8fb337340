"""Repository functions for SLAs: store, read, list and delete them by name."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, delete, select
from sqlalchemy.orm import Session

from correlator.records.sla import RULE_FIELDS
from correlator.store.dialect import upsert_insert
from correlator.store.millis import as_written
from correlator.store.tables import Sla
from correlator.vocabulary import DEFAULT_AGGREGATE

SLA_FIELDS = ("name", *RULE_FIELDS)  # one column each; other fields are kept in extra


def upsert_sla(*, conn: Connection, sla: dict) -> None:
    """Insert or replace an SLA by name."""
    row = {k: sla.get(k) for k in SLA_FIELDS}
    row["labels"] = row["labels"] or {}
    row["aggregate"] = row["aggregate"] or DEFAULT_AGGREGATE
    row["for_seconds"] = row["for_seconds"] or 0
    row["extra"] = {k: v for k, v in sla.items() if k not in SLA_FIELDS}
    stmt = upsert_insert(conn, Sla)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=["name"], set_={k: stmt.excluded[k] for k in row if k != "name"}
        ),
        [row],
    )


def sla_dict(row: Sla) -> dict:
    """Return the bundle form of a stored SLA (unset fields left out)."""
    out: dict[str, Any] = {
        "name": row.name,
        "metric": row.metric,
        "labels": row.labels,
        "aggregate": row.aggregate,
    }
    for key in ("op", "threshold", "for_seconds"):
        value = getattr(row, key)
        if value is not None and not (key == "for_seconds" and row.op is None):
            out[key] = value
    if row.breach_start is not None:
        out["breach_start"] = as_written(row.breach_start)
    return out | (row.extra or {})


def list_slas(*, conn: Connection) -> list[dict]:
    """Return every SLA, by name."""
    return [sla_dict(s) for s in Session(conn).scalars(select(Sla).order_by(Sla.name))]


def get_sla(*, conn: Connection, name: str) -> dict | None:
    """Return the SLA called ``name``, or None."""
    row = Session(conn).scalars(select(Sla).where(Sla.name == name)).first()
    return sla_dict(row) if row else None


def save_sla(*, conn: Connection, sla: dict, replace: bool = True) -> dict | None:
    """Store an SLA (its model from labels.model unless given); return it as stored.

    Return None, storing nothing, when ``replace`` is false and the name is taken.
    """
    if not replace and get_sla(conn=conn, name=sla["name"]) is not None:
        return None
    model = sla.get("model") or (sla.get("labels") or {}).get("model")
    upsert_sla(conn=conn, sla=sla | ({"model": model} if model else {}))
    return get_sla(conn=conn, name=sla["name"])


def delete_sla(*, conn: Connection, name: str) -> bool:
    """Delete the SLA called ``name`` (its incidents stay); return whether it existed."""
    return bool(conn.execute(delete(Sla).where(Sla.name == name)).rowcount)
