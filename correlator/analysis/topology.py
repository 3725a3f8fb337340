"""The service graph: which nodes a series belongs to, and what the SLA depends on."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

# Labels that name a topology node, most specific first.
NODE_LABELS = ("instance", "service", "host", "model")
# Edge kinds whose source is a dependency of their target ("instance serves model").
REVERSED_KINDS = frozenset({"serves"})
# Labels of a series measured on a call (the servicegraph connector's): caller and callee.
EDGE_LABELS = frozenset({"client", "server"})


@dataclass(slots=True)
class Topology:
    """Nodes with kinds and owners, and the depends-on relation between them."""

    nodes: dict[str, dict]
    depends: dict[str, set[str]] = field(default_factory=dict)
    neighbours: dict[str, set[str]] = field(default_factory=dict)
    callers: dict[str, set[str]] = field(default_factory=dict)  # ``calls`` edges, reversed

    @classmethod
    def from_dict(cls, topology: dict) -> Topology:
        """Build from FORMAT.md's ``{"nodes", "edges"}`` (depends-on points to dependencies)."""
        nodes = {n["id"]: n for n in topology.get("nodes", [])}
        graph = cls(nodes)
        for e in topology.get("edges", []):
            a, b = e["from"], e["to"]
            if e.get("kind") in REVERSED_KINDS:
                a, b = b, a
            graph.depends.setdefault(a, set()).add(b)
            graph.neighbours.setdefault(a, set()).add(b)
            graph.neighbours.setdefault(b, set()).add(a)
            if e.get("kind") == "calls":
                graph.callers.setdefault(e["to"], set()).add(e["from"])
        # An instance runs the model's code, so it also depends on what the model calls.
        calls: dict[str, set[str]] = {}
        for e in topology.get("edges", []):
            if e.get("kind") not in REVERSED_KINDS:
                calls.setdefault(e["from"], set()).add(e["to"])
        for e in topology.get("edges", []):
            if e.get("kind") in REVERSED_KINDS and e["to"] in calls:
                graph.depends.setdefault(e["from"], set()).update(calls[e["to"]])
        return graph

    def distances(self, start: set[str]) -> dict[str, int]:
        """Return hops from the start nodes along depends-on edges (the SLA's upstream)."""
        seen = {n: 0 for n in start}
        queue = deque(start)
        while queue:
            n = queue.popleft()
            for m in self.depends.get(n, ()):
                if m not in seen:
                    seen[m] = seen[n] + 1
                    queue.append(m)
        return seen

    def upstream(self, start: set[str]) -> dict[str, int]:
        """Return the hops from the SLA's nodes to what they depend on.

        An SLA whose node calls nothing known (a front end the traces do not cover) is taken
        to depend on the call graph's entry points: the nodes that call others and that
        nobody calls.
        """
        found = self.distances(start)
        if len(found) > len(start) or not self.callers:
            return found
        entry = {n for n in self.depends if n not in self.callers and n not in start}
        return {**{n: d + 1 for n, d in self.distances(entry).items()}, **found}

    def reaches(self, node: str) -> set[str]:
        """Return every node that ``node`` depends on, directly or not (itself excluded)."""
        found = self.distances({node})
        found.pop(node, None)
        return set(found)

    def owner(self, node_ids: list[str]) -> str | None:
        """Return the owner of the most specific of these nodes that names one."""
        for n in node_ids:
            owner = self.nodes.get(n, {}).get("owner")
            if owner:
                return owner
        return None


def label_nodes(labels: dict[str, str]) -> list[str]:
    """Return the node ids named by a label set, the series' subject first.

    A series with a ``gpu`` label is about a device of its host, even when it also
    names the instance using that GPU. A series measured on a call (``client``,
    ``server``) is about the callee, whose serving it measures.
    """
    order = ("host", *[k for k in NODE_LABELS if k != "host"]) if "gpu" in labels else NODE_LABELS
    found = [f"{key}:{labels[key]}" for key in order if key in labels]
    if not found and "server" in labels:
        found.append(f"service:{labels['server']}")
    return found


def with_calls(topology: dict, label_sets: Iterable[dict[str, str]]) -> dict:
    """Return the topology with the calls that series measured on a call show added.

    The OpenTelemetry Collector's servicegraph connector labels each edge's series with
    ``client`` and ``server``: the caller calls the callee, whatever ``topology.json`` says.
    """
    pairs = {(lbl["client"], lbl["server"]) for lbl in label_sets if lbl.keys() >= EDGE_LABELS}
    if not pairs:
        return topology
    nodes = list(topology.get("nodes", []))
    edges = list(topology.get("edges", []))
    known = {n["id"] for n in nodes}
    have = {(e["from"], e["to"]) for e in edges if e.get("kind") == "calls"}
    for client, server in sorted(pairs):
        a, b = f"service:{client}", f"service:{server}"
        if a == b:
            continue
        for n in (a, b):
            if n not in known:
                known.add(n)
                nodes.append({"id": n, "kind": "service"})
        if (a, b) not in have:
            have.add((a, b))
            edges.append({"from": a, "to": b, "kind": "calls"})
    return {**topology, "nodes": nodes, "edges": edges}


def sla_nodes(sla: dict, series_nodes: list[list[str]], graph: Topology) -> set[str]:
    """Return the topology nodes the SLA is about: from its labels, else from its series."""
    named = [n for n in label_nodes(sla.get("labels") or {}) if n in graph.nodes]
    if named:
        return {named[0]}
    found = {n for nodes in series_nodes for n in nodes if n in graph.nodes}
    return found
