"""Which series an incident's analysis reads when the store holds more than it can take.

The scope is what the SLA's own series name (their model, service, instance, host, pod and
node labels) and what those depend on in the topology (the instances serving the model, the
hosts they run on, the services they call), each at its distance in hops. A series is in
scope when one of its labels names such a thing; the nearest ones are read first, up to
``MAX_SERIES``, and the answer says how many were left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from correlator.analysis.topology import Topology, label_nodes
from correlator.selector import selector_from_labels

MAX_SERIES = 5_000  # series one analysis reads at most (a fleet's TSDB holds 250,000)
SCOPE_LABELS = ("model", "service", "instance", "host", "pod", "node")


@dataclass(slots=True)
class Scope:
    """Label values and topology nodes in scope, each with its distance from the SLA."""

    sla: dict
    values: dict[str, dict[str, int]]
    nodes: dict[str, int]

    def rank(self, name: str, labels: dict[str, str]) -> int | None:
        """Return a series' distance from the SLA (0: the SLA's own), or None out of scope."""
        sla = self.sla
        if name == sla.get("metric") and selector_from_labels(
            None, sla.get("labels") or {}
        ).matches(name, labels):
            return 0
        found = [self.nodes[n] for n in label_nodes(labels) if n in self.nodes]
        for key in SCOPE_LABELS:
            hops = self.values.get(key, {}).get(labels.get(key, ""))
            if hops is not None:
                found.append(hops)
        return min(found) + 1 if found else None


def scope_of(sla: dict, own: list[dict[str, str]], topology: dict) -> Scope:
    """Return the scope of an SLA whose own series carry the label sets ``own``."""
    values: dict[str, dict[str, int]] = {}
    for labels in [sla.get("labels") or {}, *own]:
        for key in SCOPE_LABELS:
            if labels.get(key):
                values.setdefault(key, {})[labels[key]] = 0
    graph = Topology.from_dict(topology)
    start = {n for labels in own for n in label_nodes(labels) if n in graph.nodes}
    start |= {n for n in label_nodes(sla.get("labels") or {}) if n in graph.nodes}
    nodes = graph.upstream(start) if start else {}
    for node, hops in nodes.items():
        kind, _, value = node.partition(":")
        if kind in SCOPE_LABELS and value:
            values.setdefault(kind, {}).setdefault(value, hops)
    return Scope(dict(sla), values, nodes)
