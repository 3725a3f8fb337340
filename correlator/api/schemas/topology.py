"""Service topology bodies: nodes (models, instances, hosts, services) and their edges."""

from __future__ import annotations

from pydantic import Field

from correlator.api.schemas.base import Out


class NodeOut(Out):
    """A node of the service graph; attributes it was stored with follow its owner."""

    id: str = Field(examples=["model:click_rank_v3"])
    kind: str = Field(examples=["model", "instance", "host", "service"])
    owner: str


class EdgeOut(Out):
    """An edge of the service graph."""

    from_: str = Field(alias="from")
    to: str
    kind: str = Field(examples=["calls", "serves", "runs_on"])


class TopologyOut(Out):
    """The whole stored service graph (bundle form)."""

    nodes: list[NodeOut]
    edges: list[EdgeOut]
