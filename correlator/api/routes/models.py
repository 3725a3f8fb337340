"""The model registry: models, versions with model cards, instances, impact review."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter

from correlator.api.auth import ReaderDep, WriterDep
from correlator.api.deps import EngineDep
from correlator.api.handlers import (
    Name,
    QueryName,
    field_error,
    fit,
    not_found,
    now,
    read,
    who,
    write,
)
from correlator.api.schemas.models import (
    CardIn,
    CardOut,
    ImpactOut,
    InstanceIn,
    InstanceOut,
    ModelDetail,
    ModelIn,
    ModelOut,
    ModelSummary,
)
from correlator.incidents.cards import card_errors
from correlator.incidents.snapshot import sla_model
from correlator.limits import MAX_NAME
from correlator.store.oncall import who_is_on_call
from correlator.store.registry import (
    ModelExists,
    add_instance,
    add_model,
    get_card,
    get_model,
    impact,
    list_models,
    put_card,
)
from correlator.store.slas import list_slas
from correlator.vocabulary import TEAMS

if TYPE_CHECKING:
    from sqlalchemy import Connection


# What the store's columns hold: a topology node's id ("<kind>:<name>") and a model version.
NODE_ID = MAX_NAME
VERSION = 100

router = APIRouter(tags=["models"])


@router.get("/api/v1/models", response_model=list[ModelSummary], response_model_exclude_unset=True)
async def models(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every registered model."""
    return await read(engine, list_models)


@router.post(
    "/api/v1/models", status_code=201, response_model=ModelOut, response_model_exclude_unset=True
)
async def create_model(body: ModelIn, engine: EngineDep, token: WriterDep) -> dict:
    """Register a model."""
    fit("name", body.name, NODE_ID - len("model:"), "its topology node is 'model:<name>'")
    fields = body.model_dump() | {"author": who(body.author, token)}
    try:
        return await write(engine, add_model, model=fields, now=now())
    except ModelExists as exc:
        raise field_error("name", f"model {exc} exists", 409) from exc


def _model_view(*, conn: Connection, name: str) -> dict | None:
    got = get_model(conn=conn, name=name)
    if got is None:
        return None
    got["slas"] = [s for s in list_slas(conn=conn) if sla_model(s) == name]
    oncall = who_is_on_call(conn=conn, model=name, at=now())
    got["oncall"] = {k: oncall[k] for k in TEAMS}
    return got


@router.get("/api/v1/models/{model}", response_model=ModelDetail, response_model_exclude_unset=True)
async def model(model: Name, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return a model with its versions, instances, SLAs and who is on call."""
    got = await read(engine, _model_view, name=model)
    if got is None:
        raise not_found(f"model {model}")
    return got


@router.put(
    "/api/v1/models/{model}/versions/{version}/card",
    response_model=CardOut,
    response_model_exclude_unset=True,
)
async def put_model_card(
    model: Name, version: Name, body: CardIn, engine: EngineDep, token: WriterDep
) -> dict:
    """Store the card of a model version after checking every part."""
    fit("version", version, VERSION, "a stored version's length", where="path")
    card = body.model_dump(exclude={"author"})
    errors = card_errors(card)
    if errors:
        from fastapi import HTTPException

        raise HTTPException(
            422,
            [
                {"loc": ["body", f], "field": f, "msg": f"{f} {m}", "type": "value_error"}
                for f, m in errors
            ],
        )
    if await read(engine, get_model, name=model) is None:
        raise not_found(f"model {model} (register it with POST /api/v1/models first)")
    return await write(
        engine,
        put_card,
        model=model,
        version=version,
        card=card,
        author=who(body.author, token),
        now=now(),
    )


@router.get(
    "/api/v1/models/{model}/versions/{version}/card",
    response_model=CardOut,
    response_model_exclude_unset=True,
)
async def model_card(model: Name, version: Name, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return the card of a model version."""
    got = await read(engine, get_card, model=model, version=version)
    if got is None:
        raise not_found(f"card for {model} {version}")
    return got


@router.post(
    "/api/v1/models/{model}/instances",
    status_code=201,
    response_model=InstanceOut,
    response_model_exclude_unset=True,
)
async def create_instance(
    model: Name, body: InstanceIn, engine: EngineDep, token: WriterDep
) -> dict:
    """Register an instance of a model (and tie it into the topology)."""
    node = "its topology node is '{}:<{}>'"
    fit("instance", body.instance, NODE_ID - len("instance:"), node.format("instance", "instance"))
    fit("host", body.host, NODE_ID - len("host:"), node.format("host", "host"))
    fit("version", body.version, VERSION, "a stored version's length")
    if await read(engine, get_model, name=model) is None:
        raise not_found(f"model {model}")
    fields = body.model_dump() | {"author": who(body.author, token)}
    return await write(engine, add_instance, model=model, instance=fields, now=now())


@router.get("/api/v1/impact", response_model=ImpactOut, response_model_exclude_unset=True)
async def impact_review(service: QueryName, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return the model versions and instances that depend on a shared service."""
    return await read(engine, impact, service=service)
