"""Repository functions for the topology: nodes (services, models, hosts) and their edges."""

from __future__ import annotations

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from correlator.store.dialect import upsert_insert
from correlator.store.tables import TopologyEdge, TopologyNode


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
