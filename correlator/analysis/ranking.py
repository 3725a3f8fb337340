"""Score every signal as a cause of the breach: size, timing, topology, and what explains it."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from correlator.analysis.config import Config
from correlator.analysis.onset import Anomalies
from correlator.analysis.topology import Topology

_STAT_SUFFIX = re.compile(
    r"_(p\d+|avg|mean|median|max|min|sum|count|total|ms|seconds|bytes|percent|ratio|rate)$"
)


def family(name: str) -> str:
    """Return a metric's family: its name without statistic and unit suffixes."""
    prev = None
    while prev != name:
        prev, name = name, _STAT_SUFFIX.sub("", name)
    return name


def severity(strength: np.ndarray, *, off_z: float, full_z) -> np.ndarray:
    """Map peak |z| to [0, 1] on a log scale: 0 at ``off_z``, 1 at ``full_z``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.log(np.maximum(strength, 1e-12) / off_z) / np.log(full_z / off_z)
    return np.clip(np.nan_to_num(s, nan=0.0), 0.0, 1.0)


def timing(lead: np.ndarray, *, cfg: Config) -> np.ndarray:
    """Weight onsets: full by the breach, ``late_weight`` after it (likely a symptom)."""
    return np.where(lead >= 0, 1.0, cfg.late_weight)


@dataclass(slots=True)
class Placement:
    """Where each signal sits in the topology relative to the SLA."""

    nodes: list[list[str]]  # known topology nodes named by the signal's labels
    primary: list[str | None]  # the series' subject: its most specific node in the SLA's upstream
    distance: np.ndarray  # hops from the SLA (-1: outside its upstream or unknown)


def place(labels_nodes: list[list[str]], dist: dict[str, int], graph: Topology) -> Placement:
    """Place signals on the graph: known nodes, subject node in scope, its distance."""
    nodes: list[list[str]] = []
    primary: list[str | None] = []
    distance = np.full(len(labels_nodes), -1)
    for i, names in enumerate(labels_nodes):
        known = [n for n in names if n in graph.nodes]
        nodes.append(known)
        inside = [n for n in known if n in dist]
        if inside:
            best = inside[0]
            primary.append(best)
            distance[i] = dist[best]
        else:
            primary.append(known[0] if known else None)
    return Placement(nodes, primary, distance)


def topology_weight(p: Placement, cfg: Config, *, linked: bool) -> np.ndarray:
    """Full weight inside the SLA's upstream and on unknown nodes, less outside it.

    Without ``linked`` (a topology with no dependency edges) no node is known to lie outside
    the upstream.
    """
    known = np.array([bool(n) for n in p.nodes]) & linked
    return np.where((p.distance >= 0) | ~known, 1.0, cfg.out_of_scope)


def explained_by(
    cand: np.ndarray,
    *,
    sev: np.ndarray,
    onset_t: np.ndarray,
    p: Placement,
    graph: Topology,
    step: float,
    ratio: float = 0.0,
    propagates: np.ndarray,
    demand: np.ndarray,
    began: np.ndarray | None = None,
    inputs: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate, find the strongest other anomaly that explains it.

    Another anomaly explains this one when it is related (on one of its nodes or adjacent
    to its subject; a caller only through its demand) and began clearly earlier (by a grid
    step or more), or when it sits on a node this one depends on, began no later and is at
    least ``ratio`` as severe (a much smaller fault below cannot cause a large one). A fault
    below reaches its callers as latency and errors, so the second way holds only for rows
    in ``propagates``. Demand (rows in ``demand``) is set by who sends it: only other
    demand, or latency and errors (retries), explain it, never a resource such as a CPU or
    a GPU's temperature. An explainer's time is when its signal began (``began``: for
    copies of one signal, the first copy's onset; default ``onset_t``). ``inputs`` (derived,
    measured) marks rows derived from others (call gaps: about their callee, measured at
    the caller too) and the rows they are derived from (a caller's client spans): a
    measurement does not explain what is computed from it, and a derived row explains only
    through its subject.
    Returns (explanation weight in [0, 1], index of the explainer or -1).
    """
    weight = np.zeros(sev.size)
    who = np.full(sev.size, -1)
    began = onset_t if began is None else began
    none = [False] * sev.size
    derived, measured = (m.tolist() for m in inputs) if inputs is not None else (none, none)
    reach_cache: dict[str, set[str]] = {}
    for i in cand:
        ni = set(p.nodes[i])
        if not ni or p.distance[i] < 0:
            continue
        pi = p.primary[i]
        if pi not in reach_cache:
            reach_cache[pi] = graph.reaches(pi)
        deeper = reach_cache[pi]
        near = ni | graph.neighbours.get(pi, set())
        calling = set().union(*(graph.callers.get(n, set()) for n in ni)) - deeper - ni
        for j in cand:
            if j == i or p.distance[j] < 0 or sev[j] <= 0:
                continue
            if demand[i] and not (demand[j] or propagates[j]):
                continue
            if derived[i] and measured[j]:
                continue
            # A caller reaches its callee only through what it sends (demand). A derived row
            # (a call gap) is measured at both ends but is about its subject alone.
            own = p.nodes[j][:1] if derived[j] else p.nodes[j]
            by = set(own) - (set() if demand[j] else calling)
            earlier = began[j] < onset_t[i] - step and near.intersection(by)
            below = (
                propagates[i]
                and p.primary[j] in deeper
                and began[j] <= onset_t[i] + step
                and sev[j] >= ratio * sev[i]
            )
            if earlier or below:
                w = min(1.0, sev[j] / max(sev[i], 1e-9))
                if w > weight[i]:
                    weight[i], who[i] = w, j
    return weight, who


def held(a: Anomalies, *, persistence: float) -> np.ndarray:
    """Return the persistence factor: ``1 - persistence`` plus its share of points still out."""
    return (1.0 - persistence) + persistence * a.persistence


def combine(factors: dict[str, np.ndarray], exponents: dict[str, float]) -> np.ndarray:
    """Return the product of the factors, each raised to its exponent (1 when unnamed)."""
    terms = [
        f if (w := exponents.get(n, 1.0)) == 1.0 else np.power(f, w) for n, f in factors.items()
    ]
    return functools.reduce(np.multiply, terms)


def tie_order(keys: list[tuple], *larger_first: np.ndarray) -> np.ndarray:
    """Return each row's place among equal scores: by these figures, larger first, then by key.

    The key (a row's identity) makes the order independent of the order rows came in.
    """
    n = len(keys)
    by_key = np.empty(n, dtype=np.int64)
    by_key[sorted(range(n), key=keys.__getitem__)] = np.arange(n)
    order = np.lexsort((by_key, *(-np.asarray(f, dtype=float) for f in reversed(larger_first))))
    place = np.empty(n, dtype=np.int64)
    place[order] = np.arange(n)
    return place


def best_first(score: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Return row indices by score, best first, equal scores in ``tie`` order."""
    return np.lexsort((tie, -score))
