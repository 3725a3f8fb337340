"""Model registry bodies: models, versions with model cards, instances, impact of a service."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from correlator.api.handlers import Author, Body
from correlator.api.schemas.base import Out
from correlator.api.schemas.oncall import OnCallPair
from correlator.api.schemas.slas import SlaOut
from correlator.limits import MAX_NAME, MAX_SUMMARY, NAME_PATTERN, Text200
from correlator.vocabulary import Team


class ModelIn(Body):
    """A model to register."""

    name: str = Field(min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)
    owner: Team = "algo"
    description: str = Field("", max_length=MAX_SUMMARY)
    author: Author = None


class ModelOut(Out):
    """A registered model."""

    name: str
    owner: str
    description: str
    created_at: float = Field(description="unix seconds")
    author: str


class ModelSummary(ModelOut):
    """A model in the list: its version names and how many instances run it."""

    versions: list[str]
    instances: int


class VersionOut(Out):
    """A version of a model and whether it has a card."""

    version: str
    has_card: bool
    card_updated_at: float | None
    card_author: str | None


class InstanceIn(Body):
    """An instance of a model running a version on a host."""

    instance: str = Field(min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)
    version: Text200 = ""
    host: Text200 = ""
    author: Author = None


class InstanceOut(Out):
    """A registered instance of a model."""

    model: str
    instance: str
    version: str
    host: str
    created_at: float = Field(description="unix seconds")
    author: str


class ModelDetail(ModelOut):
    """A model with its versions, instances, SLAs and who is on call for it now."""

    versions: list[VersionOut]
    instances: list[InstanceOut]
    slas: list[SlaOut]
    oncall: OnCallPair


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


class CardOut(Out):
    """The stored card of a model version."""

    model: str
    version: str
    card: dict[str, Any] = Field(description="the card's parts as CardIn names them")
    updated_at: float | None = Field(description="unix seconds")
    author: str | None


class ImpactModel(Out):
    """A model that depends on the service, and through what (topology, card)."""

    model: str
    via: list[str]
    versions: list[str]
    instances: list[str]
    owner: str


class ImpactOut(Out):
    """The model versions and instances that depend on a shared service."""

    service: str
    node: str
    known: bool = Field(description="whether the topology has the service's node")
    models: list[ImpactModel]
    instances: list[str]
    count: int
