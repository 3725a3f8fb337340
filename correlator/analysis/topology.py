"""The service graph: which nodes a series belongs to, and what the SLA depends on."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

# Labels that name a topology node, most specific first.
NODE_LABELS = ("instance", "service", "host", "model")
# Edge kinds whose source is a dependency of their target ("instance serves model").
REVERSED_KINDS = frozenset({"serves"})


@dataclass(slots=True)
class Topology:
    """Nodes with kinds and owners, and the depends-on relation between them."""

    nodes: dict[str, dict]
    depends: dict[str, set[str]] = field(default_factory=dict)
    neighbours: dict[str, set[str]] = field(default_factory=dict)

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
    names the instance using that GPU.
    """
    order = ("host", *[k for k in NODE_LABELS if k != "host"]) if "gpu" in labels else NODE_LABELS
    return [f"{key}:{labels[key]}" for key in order if key in labels]


def sla_nodes(sla: dict, series_nodes: list[list[str]], graph: Topology) -> set[str]:
    """Return the topology nodes the SLA is about: from its labels, else from its series."""
    named = [n for n in label_nodes(sla.get("labels") or {}) if n in graph.nodes]
    if named:
        return {named[0]}
    found = {n for nodes in series_nodes for n in nodes if n in graph.nodes}
    return found
