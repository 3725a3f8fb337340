"""The model registry: models, versions with model cards, instances, impact review."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import Field

from correlator.api.auth import ReaderDep, WriterDep
from correlator.api.deps import EngineDep
from correlator.api.process_io import (
    Author,
    Body,
    Name,
    QueryName,
    Text200,
    field_error,
    not_found,
    now,
    read,
    who,
    write,
)
from correlator.incidents.cards import card_errors
from correlator.incidents.snapshot import sla_model
from correlator.store.catalog import list_slas
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

router = APIRouter(tags=["models"])


class ModelIn(Body):
    """A model to register."""

    name: str = Field(min_length=1, max_length=200, pattern=r"^[^\x00/]+$")
    owner: Literal["algo", "infra"] = "algo"
    description: str = Field("", max_length=10_000)
    author: Author = None


class CardIn(Body):
    """A model card: the article's six parts plus random seed and locked dependencies."""

    purpose: Any = Field(None, description="what the model is for")
    input_schema: Any = Field(None, description="JSON Schema of the request")
    output_schema: Any = Field(None, description="JSON Schema of the response")
    feature_dependencies: Any = Field(None, description="[{service, features}]")
    offline_evaluation: Any = Field(None, description="dataset and metrics")
    resource_needs: Any = Field(None, description="GPU, memory, latency budget, QPS per replica")
    known_risks: Any = Field(None, description="list of known risks")
    random_seed: Any = Field(None, description="the training seed (integer)")
    locked_dependencies: Any = Field(None, description="requirements lock file contents")
    author: Author = None


class InstanceIn(Body):
    """An instance of a model running a version on a host."""

    instance: str = Field(min_length=1, max_length=200, pattern=r"^[^\x00/]+$")
    version: Text200 = ""
    host: Text200 = ""
    author: Author = None


@router.get("/api/v1/models")
async def models(engine: EngineDep, _reader: ReaderDep) -> list[dict]:
    """Return every registered model."""
    return await read(engine, list_models)


@router.post("/api/v1/models", status_code=201)
async def create_model(body: ModelIn, engine: EngineDep, token: WriterDep) -> dict:
    """Register a model."""
    fields = body.model_dump() | {"author": who(body.author, token)}
    try:
        return await write(engine, add_model, model=fields, now=now())
    except ModelExists as exc:
        raise field_error("name", f"model {exc} exists", 409) from exc


def _model_view(*, conn, name: str) -> dict | None:
    got = get_model(conn=conn, name=name)
    if got is None:
        return None
    got["slas"] = [s for s in list_slas(conn=conn) if sla_model(s) == name]
    oncall = who_is_on_call(conn=conn, model=name, at=now())
    got["oncall"] = {k: oncall[k] for k in ("algo", "infra")}
    return got


@router.get("/api/v1/models/{model}")
async def model(model: Name, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return a model with its versions, instances, SLAs and who is on call."""
    got = await read(engine, _model_view, name=model)
    if got is None:
        raise not_found(f"model {model}")
    return got


@router.put("/api/v1/models/{model}/versions/{version}/card")
async def put_model_card(
    model: Name, version: Name, body: CardIn, engine: EngineDep, token: WriterDep
) -> dict:
    """Store the card of a model version after checking every part."""
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


@router.get("/api/v1/models/{model}/versions/{version}/card")
async def model_card(model: Name, version: Name, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return the card of a model version."""
    got = await read(engine, get_card, model=model, version=version)
    if got is None:
        raise not_found(f"card for {model} {version}")
    return got


@router.post("/api/v1/models/{model}/instances", status_code=201)
async def create_instance(
    model: Name, body: InstanceIn, engine: EngineDep, token: WriterDep
) -> dict:
    """Register an instance of a model (and tie it into the topology)."""
    if await read(engine, get_model, name=model) is None:
        raise not_found(f"model {model}")
    fields = body.model_dump() | {"author": who(body.author, token)}
    return await write(engine, add_instance, model=model, instance=fields, now=now())


@router.get("/api/v1/impact")
async def impact_review(service: QueryName, engine: EngineDep, _reader: ReaderDep) -> dict:
    """Return the model versions and instances that depend on a shared service."""
    return await read(engine, impact, service=service)
