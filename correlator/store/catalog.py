"""Repository functions for changes, topology and SLAs."""

from __future__ import annotations

from sqlalchemy import Connection, delete, select
from sqlalchemy.orm import Session

from correlator.store.dialect import upsert_insert
from correlator.store.tables import Change, Sla, TopologyEdge, TopologyNode

CHANGE_FIELDS = ("id", "ts", "kind", "target", "summary", "owner", "labels")
# Change-calendar columns (unix seconds in dicts for the *_ts / *_at ones).
PROCESS_FIELDS = ("person", "scope", "rollout_stage", "canary_percent", "version", "author")
PROCESS_TIMES = ("planned_ts", "registered_at")
SLA_FIELDS = (
    "name",
    "metric",
    "labels",
    "aggregate",
    "op",
    "threshold",
    "for_seconds",
    "breach_start",
)


def upsert_changes(*, conn: Connection, changes: list[dict]) -> int:
    """Insert or replace change events by id; return how many were given."""
    if not changes:
        return 0
    rows = []
    for c in changes:
        rows.append(
            {
                "id": c["id"],
                "ts": round(c["ts"] * 1000) if c.get("ts") is not None else None,
                "kind": c["kind"],
                "target": c.get("target", ""),
                "summary": c.get("summary", ""),
                "owner": c.get("owner", ""),
                "labels": c.get("labels", {}),
                "extra": {
                    k: v
                    for k, v in c.items()
                    if k not in CHANGE_FIELDS + PROCESS_FIELDS + PROCESS_TIMES
                },
                **{k: c.get(k) for k in PROCESS_FIELDS},
                **{k: _ms(c.get(k)) for k in PROCESS_TIMES},
            }
        )
    stmt = upsert_insert(conn, Change)
    stmt = stmt.on_conflict_do_update(
        index_elements=["id"],
        set_={
            k: stmt.excluded[k]
            for k in ("ts", "kind", "target", "summary", "owner", "labels", "extra")
            + PROCESS_FIELDS
            + PROCESS_TIMES
        },
    )
    conn.execute(stmt, rows)
    return len(rows)


def change_dict(row: Change) -> dict:
    """Return the bundle form of a stored change."""
    out = {
        "id": row.id,
        "ts": row.ts / 1000.0 if row.ts is not None else None,
        "kind": row.kind,
        "target": row.target,
        "summary": row.summary,
        "owner": row.owner,
        "labels": row.labels,
    }
    if out["ts"] is not None and out["ts"].is_integer():
        out["ts"] = int(out["ts"])
    for key in PROCESS_FIELDS:
        if getattr(row, key, None) is not None:
            out[key] = getattr(row, key)
    for key in PROCESS_TIMES:
        if getattr(row, key, None) is not None:
            out[key] = getattr(row, key) / 1000.0
    return out | (row.extra or {})


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(float(seconds) * 1000)


def list_changes(
    *, conn: Connection, start: float | None = None, end: float | None = None
) -> list[dict]:
    """Return changes with start <= ts <= end (unix seconds), oldest first."""
    stmt = select(Change).order_by(Change.ts, Change.id)
    if start is not None:
        stmt = stmt.where(Change.ts >= round(start * 1000))
    if end is not None:
        stmt = stmt.where(Change.ts <= round(end * 1000))
    return [change_dict(c) for c in Session(conn).scalars(stmt)]


def upsert_topology(*, conn: Connection, topology: dict) -> None:
    """Insert or update topology nodes and edges."""
    nodes = [
        {
            "id": n["id"],
            "kind": n.get("kind", ""),
            "owner": n.get("owner", ""),
            "attrs": {k: v for k, v in n.items() if k not in ("id", "kind", "owner")},
        }
        for n in topology.get("nodes", [])
    ]
    if nodes:
        stmt = upsert_insert(conn, TopologyNode)
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=["id"],
                set_={k: stmt.excluded[k] for k in ("kind", "owner", "attrs")},
            ),
            nodes,
        )
    edges = [
        {"src": e["from"], "dst": e["to"], "kind": e.get("kind", "")}
        for e in topology.get("edges", [])
    ]
    if edges:
        conn.execute(upsert_insert(conn, TopologyEdge).on_conflict_do_nothing(), edges)


def read_topology(*, conn: Connection) -> dict:
    """Return the whole stored topology in bundle form."""
    nodes = [
        {"id": n.id, "kind": n.kind, "owner": n.owner, **(n.attrs or {})}
        for n in Session(conn).scalars(select(TopologyNode).order_by(TopologyNode.id))
    ]
    edges = [
        {"from": e.src, "to": e.dst, "kind": e.kind}
        for e in Session(conn).scalars(
            select(TopologyEdge).order_by(TopologyEdge.src, TopologyEdge.dst, TopologyEdge.kind)
        )
    ]
    return {"nodes": nodes, "edges": edges}


def upsert_sla(*, conn: Connection, sla: dict) -> None:
    """Insert or replace an SLA by name."""
    row = {k: sla.get(k) for k in SLA_FIELDS}
    row["labels"] = row["labels"] or {}
    row["aggregate"] = row["aggregate"] or "max"
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
    out = {"name": row.name, "metric": row.metric, "labels": row.labels, "aggregate": row.aggregate}
    for key in ("op", "threshold", "for_seconds", "breach_start"):
        value = getattr(row, key)
        if value is not None and not (key == "for_seconds" and row.op is None):
            out[key] = value
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
