"""Repository functions for the model registry: models, versions with cards, instances."""

from __future__ import annotations

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from correlator.store.tables import Model, ModelInstance, ModelVersion
from correlator.store.topology import read_topology, upsert_topology


class ModelExists(ValueError):
    """A model with that name is already registered."""


def _model_dict(row: Model) -> dict:
    return {
        "name": row.name,
        "owner": row.owner,
        "description": row.description,
        "created_at": row.created_at,
        "author": row.author,
    }


def _instance_dict(row: ModelInstance) -> dict:
    return {
        "model": row.model,
        "instance": row.instance,
        "version": row.version,
        "host": row.host,
        "created_at": row.created_at,
        "author": row.author,
    }


def add_model(*, conn: Connection, model: dict, now: float) -> dict:
    """Register a model; raise ModelExists when the name is taken."""
    session = Session(conn)
    if session.get(Model, model["name"]) is not None:
        raise ModelExists(model["name"])
    row = Model(
        name=model["name"],
        owner=model.get("owner") or "algo",
        description=model.get("description") or "",
        created_at=now,
        author=model.get("author") or "",
    )
    session.add(row)
    session.flush()
    upsert_topology(
        conn=conn,
        topology={"nodes": [{"id": f"model:{row.name}", "kind": "model", "owner": row.owner}]},
    )
    return _model_dict(row)


def list_models(*, conn: Connection) -> list[dict]:
    """Return every model with its version names and instance count."""
    session = Session(conn)
    versions: dict[str, list[str]] = {}
    for v in session.scalars(select(ModelVersion).order_by(ModelVersion.id)):
        versions.setdefault(v.model, []).append(v.version)
    counts: dict[str, int] = {}
    for i in session.scalars(select(ModelInstance)):
        counts[i.model] = counts.get(i.model, 0) + 1
    return [
        _model_dict(m) | {"versions": versions.get(m.name, []), "instances": counts.get(m.name, 0)}
        for m in session.scalars(select(Model).order_by(Model.name))
    ]


def get_model(*, conn: Connection, name: str) -> dict | None:
    """Return one model with its versions and instances, or None."""
    session = Session(conn)
    row = session.get(Model, name)
    if row is None:
        return None
    versions = [
        {
            "version": v.version,
            "has_card": v.card is not None,
            "card_updated_at": v.card_updated_at,
            "card_author": v.card_author,
        }
        for v in session.scalars(
            select(ModelVersion).where(ModelVersion.model == name).order_by(ModelVersion.id)
        )
    ]
    instances = [
        _instance_dict(i)
        for i in session.scalars(
            select(ModelInstance)
            .where(ModelInstance.model == name)
            .order_by(ModelInstance.instance)
        )
    ]
    return _model_dict(row) | {"versions": versions, "instances": instances}


def put_card(*, conn: Connection, model: str, version: str, card: dict, author: str, now: float):
    """Store the card of a model version (creating the version); return it."""
    session = Session(conn)
    row = session.scalars(
        select(ModelVersion).where(ModelVersion.model == model, ModelVersion.version == version)
    ).first()
    if row is None:
        row = ModelVersion(model=model, version=version)
        session.add(row)
    row.card, row.card_updated_at, row.card_author = card, now, author
    session.flush()
    return _card_dict(row)


def _card_dict(row: ModelVersion) -> dict:
    return {
        "model": row.model,
        "version": row.version,
        "card": row.card,
        "updated_at": row.card_updated_at,
        "author": row.card_author,
    }


def get_card(*, conn: Connection, model: str, version: str) -> dict | None:
    """Return the card of a model version, or None when it has none."""
    row = (
        Session(conn)
        .scalars(
            select(ModelVersion).where(ModelVersion.model == model, ModelVersion.version == version)
        )
        .first()
    )
    return _card_dict(row) if row is not None and row.card is not None else None


def add_instance(*, conn: Connection, model: str, instance: dict, now: float) -> dict:
    """Register (or update) an instance of a model and tie it into the topology."""
    session = Session(conn)
    row = session.scalars(
        select(ModelInstance).where(
            ModelInstance.model == model, ModelInstance.instance == instance["instance"]
        )
    ).first()
    if row is None:
        row = ModelInstance(model=model, instance=instance["instance"], created_at=now)
        session.add(row)
    row.version = instance.get("version") or ""
    row.host = instance.get("host") or ""
    row.author = instance.get("author") or ""
    if row.version:
        exists = session.scalars(
            select(ModelVersion).where(
                ModelVersion.model == model, ModelVersion.version == row.version
            )
        ).first()
        if exists is None:
            session.add(ModelVersion(model=model, version=row.version))
    session.flush()
    node = f"instance:{row.instance}"
    topo = {
        "nodes": [{"id": node, "kind": "instance", "owner": "infra"}],
        "edges": [{"from": node, "to": f"model:{model}", "kind": "serves"}],
    }
    if row.host:
        topo["nodes"].append({"id": f"host:{row.host}", "kind": "host", "owner": "infra"})
        topo["edges"].append({"from": node, "to": f"host:{row.host}", "kind": "runs_on"})
    upsert_topology(conn=conn, topology=topo)
    return _instance_dict(row)


def _card_services(card: dict | None) -> set[str]:
    out = set()
    for dep in (card or {}).get("feature_dependencies") or []:
        name = dep if isinstance(dep, str) else (dep or {}).get("service")
        if name:
            out.add(str(name).removeprefix("service:"))
    return out


def impact(*, conn: Connection, service: str) -> dict:
    """Return the model versions and instances that depend on a shared service."""
    service = service.removeprefix("service:")
    node = f"service:{service}"
    topo = read_topology(conn=conn)
    owners = {n["id"]: n.get("owner", "") for n in topo["nodes"]}
    callers: dict[str, set] = {}
    # Walk "calls" edges backwards: anything that (transitively) calls the service.
    frontier, seen = [node], {node}
    while frontier:
        cur = frontier.pop()
        for e in topo["edges"]:
            if e["to"] == cur and e["kind"] == "calls" and e["from"] not in seen:
                seen.add(e["from"])
                frontier.append(e["from"])
    for n in seen - {node}:
        if n.startswith("model:"):
            callers.setdefault(n.removeprefix("model:"), set()).add("topology")
    session = Session(conn)
    versions: dict[str, list[str]] = {}
    by_card: dict[str, list[str]] = {}
    for v in session.scalars(select(ModelVersion).order_by(ModelVersion.id)):
        if service in _card_services(v.card):
            callers.setdefault(v.model, set()).add("card")
            by_card.setdefault(v.model, []).append(v.version)
        versions.setdefault(v.model, []).append(v.version)
    instances: dict[str, set] = {}
    for e in topo["edges"]:
        if e["kind"] == "serves" and e["to"].startswith("model:"):
            instances.setdefault(e["to"].removeprefix("model:"), set()).add(
                e["from"].removeprefix("instance:")
            )
    for i in session.scalars(select(ModelInstance)):
        instances.setdefault(i.model, set()).add(i.instance)
    models = [
        {
            "model": m,
            "via": sorted(callers[m]),
            "versions": versions.get(m, []) if "topology" in callers[m] else by_card[m],
            "instances": sorted(instances.get(m, set())),
            "owner": owners.get(f"model:{m}", ""),
        }
        for m in sorted(callers)
    ]
    every = sorted({i for m in models for i in m["instances"]})
    return {
        "service": service,
        "node": node,
        "known": node in owners,
        "models": models,
        "instances": every,
        "count": len(models),
    }
