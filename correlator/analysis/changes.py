"""Change events as suspects: closeness before the breach, place in the graph, confirmation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from correlator.analysis.config import Config
from correlator.analysis.topology import label_nodes


@dataclass(slots=True)
class ChangeScore:
    """One change's score and what supports it."""

    change: dict
    score: float
    lead: float
    in_scope: bool
    confirmed_by: int  # signal row whose anomaly began right after the change, or -1
    confirmation: float
    rows: list[int]  # every signal row whose anomaly the change explains


def change_nodes(change: dict, known: set[str]) -> list[str]:
    """Return the topology nodes a change touches: its target and its labels' nodes."""
    out = [change["target"]] if change.get("target") in known else []
    out += [n for n in label_nodes(change.get("labels") or {}) if n in known and n not in out]
    return out


def touches(change: dict, labels: dict[str, str], row_nodes: list[str], volatile) -> bool:
    """Say whether a signal belongs to what the change touched."""
    wanted = {k: v for k, v in (change.get("labels") or {}).items() if k not in volatile}
    if wanted:
        return all(labels.get(k) == v for k, v in wanted.items())
    return change.get("target") in row_nodes


def score_changes(
    changes: list[dict],
    *,
    breach: float,
    step: float,
    dist: dict[str, int],
    known: set[str],
    labels: list[dict],
    row_nodes: list[list[str]],
    sev: np.ndarray,
    onset_t: np.ndarray,
    upstream: list[set[str]],
    cfg: Config,
) -> list[ChangeScore]:
    """Score each change: ``topology x closeness x (u + (1 - u) x confirmation)``.

    ``u`` is ``cfg.change_unconfirmed``, the share a change keeps with nothing confirming it.

    A change is confirmed by an anomaly on what it touched that began within ``confirm_s``
    after it; it explains every anomaly on that or on a node depending on it since then.
    """
    out = []
    active = np.flatnonzero(sev > 0)
    for c in changes:
        ts = float(c["ts"])
        lead = breach - ts
        nodes = change_nodes(c, known)
        in_scope = any(n in dist for n in nodes)
        topo = cfg.out_of_scope if nodes and not in_scope else 1.0
        # Closeness decays over the span an onset is searched in, and ends with it: a change
        # made before that span, or after the breach (a mitigation, say), did not cause it.
        near = (
            float(np.exp(-max(lead, 0.0) / cfg.search_s)) if -step <= lead <= cfg.search_s else 0.0
        )
        after = [int(i) for i in active if onset_t[i] >= ts - step]
        own = [
            i
            for i in after
            if onset_t[i] <= min(ts + cfg.confirm_s, breach + cfg.post_s)
            and touches(c, labels[i], row_nodes[i], cfg.volatile_labels)
        ]
        best = max(own, key=lambda i: sev[i], default=-1)
        conf = float(sev[best]) if best >= 0 else 0.0
        unconfirmed = cfg.change_unconfirmed
        score = topo * near * (unconfirmed + (1 - unconfirmed) * conf)
        rows = []
        if best >= 0:
            rows = [i for i in after if i in own or upstream[i].intersection(nodes)]
        out.append(ChangeScore(c, score, lead, in_scope, best, conf, rows))
    return out
