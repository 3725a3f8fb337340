"""One signal's views (copies, operations, statistics) as one suspect, and one metric's wave."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from correlator.analysis.ranking import family
from correlator.analysis.topology import EDGE_LABELS, NODE_LABELS

# Label keys whose values name one of several copies of a subject. A group must still share
# another label (its model, host or service), so different subjects never merge.
MEMBER_KEYS = ("instance", "pod", "gpu", "device", "replica", "container", "cpu")
# Label keys whose values name one operation of a subject (span metrics per span name).
OPERATION_KEYS = ("span_name",)
# Label keys that name one view of a signal: a copy or an operation.
_VIEW_KEYS = (*MEMBER_KEYS, *OPERATION_KEYS)
# What the members of a group are called where the label key is not the word.
_NOUNS = {"span_name": "operation"}
# Label keys that name where a series is measured (a node, a call's ends, a copy), not what.
_NOT_METRIC = frozenset(MEMBER_KEYS) | set(NODE_LABELS) | EDGE_LABELS


def subject(name: str, labels: dict[str, str]) -> tuple | None:
    """Return the group a series belongs to: its metric and labels less the copy's, or None."""
    shared = tuple(sorted((k, v) for k, v in labels.items() if k not in MEMBER_KEYS))
    if not shared or len(shared) == len(labels):
        return None  # no subject left to share, or nothing names a copy
    return (name, shared)


def signal(name: str, labels: dict[str, str]) -> tuple | None:
    """Return the signal a series is a view of: its metric family and labels less the view's.

    Copies (pods), operations (span names), statistics and units of one metric (``latency_p99``,
    ``latency_avg``) are views of one signal: one suspect. None when no label is left to share.
    """
    shared = tuple(sorted((k, v) for k, v in labels.items() if k not in _VIEW_KEYS))
    return (family(name), shared) if shared else None


def sibling_counts(names: list[str], labels: list[dict[str, str]]) -> dict[tuple, int]:
    """Return how many series each signal has in all, per metric: {(signal, metric): count}."""
    counts: dict[tuple, int] = defaultdict(int)
    for name, lbl in zip(names, labels, strict=True):
        gid = signal(name, lbl)
        if gid is not None:
            counts[(gid, name)] += 1
    return counts


def first_onsets(
    names: list[str], labels: list[dict[str, str]], onset_t: np.ndarray, live: np.ndarray
) -> np.ndarray:
    """Return when each row's signal began: for copies of one signal, the earliest live copy's.

    A model's traffic reaches all its instances together, yet each copy crosses its own
    noise at its own moment; the signal began with the first. Rows not ``live`` (not out of
    range) and rows of no group keep their own onset.
    """
    began = np.asarray(onset_t, dtype=float).copy()
    gids = [subject(n, lbl) if ok else None for n, lbl, ok in zip(names, labels, live, strict=True)]
    first: dict[tuple, float] = {}
    for gid, t in zip(gids, began.tolist(), strict=True):
        if gid is not None:
            first[gid] = min(first.get(gid, t), t)
    for i, gid in enumerate(gids):
        if gid is not None:
            began[i] = first[gid]
    return began


def _copies(members: list[dict], total: int, metrics: list[str]) -> str:
    """Return what the members are, plural: "instances", "operations" or "series"."""
    if len(metrics) > 1:
        return "series"  # several statistics or units of one metric
    common = [k for k in _VIEW_KEYS if all(k in m["labels"] for m in members)]
    noun = _NOUNS.get(common[0], common[0]) if common else "series"
    return noun if total == 1 or noun == "series" else f"{noun}s"


def group_series(suspects: list[dict], totals: dict[tuple, int]) -> list[dict]:
    """Merge series suspects that are views of one signal (``signal``), strongest first.

    ``suspects`` are best first; a group takes its strongest member's place, metric, figures
    and evidence, holds only the shared labels and lists every member under ``members``.
    ``totals`` are ``sibling_counts``: the members moved out of how many series.
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    order: list[tuple] = []
    for s in suspects:
        gid = signal(s["metric"], s.get("labels") or {}) if s.get("kind") == "series" else None
        gid = gid or ("single", id(s))
        if gid not in groups:
            order.append(gid)
        groups[gid].append(s)
    out = []
    for gid in order:
        members = groups[gid]
        if len(members) == 1:
            out.append(members[0])
            continue
        shared = dict(gid[1])
        metrics = list(dict.fromkeys(m["metric"] for m in members))
        total = max(sum(totals.get((gid, m), 0) for m in metrics), len(members))
        head = dict(members[0], labels=shared)
        head["members"] = [
            {
                "metric": m["metric"],
                "labels": {k: v for k, v in m["labels"].items() if k not in shared},
                "score": round(float(m["score"]), 4),
                "onset": m.get("onset"),
                "lead_seconds": m.get("lead_seconds"),
                "z": m.get("z"),
            }
            for m in members
        ]
        listed = f": {', '.join(metrics)}" if len(metrics) > 1 else ""
        head["evidence"] = (
            f"{head['evidence']}; moved on {len(members)} of {total} "
            f"{_copies(head['members'], total, metrics)}{listed}"
        )
        out.append(head)
    return out


def waves(
    names: list[str],
    labels: list[dict[str, str]],
    subjects: list[str | None],
    onset_t: np.ndarray,
    strength: np.ndarray,
    live: np.ndarray,
    *,
    least: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Return, per row, the leader of its wave and how many nodes the wave covers (else 0).

    A wave is one metric (same name and labels, less those naming where it is measured)
    whose onset falls at one moment on ``least`` nodes or more (``subjects``: the node each
    row's labels name first) among the ``live`` rows: one event, not several causes. It is
    led by the member whose move is larger than every other's (``leader[i] == i``); equal
    largest moves (a host's figure copied to each of its services) single out none, and
    the wave has no leader (-1).
    """
    keys: dict[tuple, list[int]] = defaultdict(list)
    for i in np.flatnonzero(live):
        rest = tuple(sorted((k, v) for k, v in labels[i].items() if k not in _NOT_METRIC))
        keys[(names[i], rest, float(onset_t[i]))].append(int(i))
    leader = np.full(len(names), -1)
    size = np.zeros(len(names), dtype=int)
    for rows in keys.values():
        nodes = {subjects[i] for i in rows} - {None}
        if len(nodes) < least:
            continue
        first, second = sorted(rows, key=lambda i: -strength[i])[:2]
        size[rows] = len(nodes)
        if not np.isclose(strength[first], strength[second], rtol=1e-9, atol=0.0):
            leader[rows] = first
    return leader, size
