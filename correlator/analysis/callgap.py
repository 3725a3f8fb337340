"""The time a call spends between its caller and its callee's handler, from span metrics.

A CLIENT span lasts from the caller's send to its receipt of the answer; the callee's
SERVER span of the same RPC lasts while it handles it. When the first grows and the
second does not, the time is lost between them: the callee's network, its pod's queue,
its proxy. Such a move is the callee's, though only its callers' spans show it.
"""

from __future__ import annotations

import re

import numpy as np

from correlator.bundle import Series

# Span metrics of a duration statistic (spanmetrics connector: ..._duration_p90_seconds).
_DURATION = re.compile(r"^(?P<family>.*)duration(?P<stat>_p\d+)?_seconds$")
_SPAN_LABELS = frozenset({"service", "span_kind", "span_name"})


def rpc_name(span_name: str) -> str:
    """Return an RPC span's ``package.Service/Method`` as each gRPC instrumentation spells it.

    The wire path starts with ``/`` (Python's server spans keep it) and Node.js' server
    spans prefix ``grpc.``; a client span of the same call has neither.
    """
    return span_name.lstrip("/").removeprefix("grpc.")


def gaps(series: list[Series]) -> list[Series]:
    """Return a client-minus-server duration series for each caller of an RPC with one server.

    Only RPC names (``Service/Method``) served by one service are paired, so generic span
    names (``HTTP GET``) pair nothing; other labels (``status_code``...) must agree and are
    kept. The result is labelled as a call edge, ``client`` and ``server``, and so is the
    callee's; it holds the client's times that have a server sample within half a step.
    """
    servers: dict[tuple, list[Series]] = {}
    clients: list[tuple[tuple, Series]] = []
    for s in series:
        kind = s.labels.get("span_kind", "").upper()
        m = _DURATION.match(s.name)
        if m is None or "/" not in s.labels.get("span_name", "") or "service" not in s.labels:
            continue
        # The key carries the name of the gap each pair makes: one match per series.
        gap_name = f"call_gap_duration{m['stat'] or ''}_seconds"
        key = (s.name, gap_name, rpc_name(s.labels["span_name"]), _rest(s.labels))
        if kind.endswith("SERVER"):
            servers.setdefault(key, []).append(s)
        elif kind.endswith("CLIENT"):
            clients.append((key, s))
    out = []
    for key, client in clients:
        served = servers.get(key, [])
        if len(served) != 1 or served[0].labels["service"] == client.labels["service"]:
            continue
        server = served[0]
        ci, si = _same_times(client.ts, server.ts)
        if ci.size == 0:
            continue
        _, gap_name, rpc, rest = key
        labels = dict(rest) | {
            "client": client.labels["service"],
            "server": server.labels["service"],
            "span_name": rpc,
        }
        out.append(Series(gap_name, labels, client.ts[ci], client.values[ci] - server.values[si]))
    return out


def _rest(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """Return the labels beside the span's own (service, kind, name), sorted."""
    return tuple(sorted((k, v) for k, v in labels.items() if k not in _SPAN_LABELS))


def _same_times(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return indices pairing each time of ``a`` with the nearest of ``b`` within half a step.

    Both sides come from one recording or scrape as a rule, but a few seconds of offset
    between two exporters still pair; ``a``'s step is its median sample interval.
    """
    if a.size == 0 or b.size == 0:
        return np.empty(0, dtype=int), np.empty(0, dtype=int)
    half = 0.5 * float(np.median(np.diff(a))) if a.size > 1 else 0.0
    j = np.clip(np.searchsorted(b, a), 1, max(b.size - 1, 1))
    left = np.clip(j - 1, 0, b.size - 1)
    right = np.clip(j, 0, b.size - 1)
    near = np.where(np.abs(b[left] - a) <= np.abs(b[right] - a), left, right)
    ok = np.abs(b[near] - a) <= half
    return np.flatnonzero(ok), near[ok]


def is_gap(names: list[str]) -> np.ndarray:
    """Say which metrics are call gaps made by ``gaps``."""
    return np.array([n.startswith("call_gap_duration") for n in names], dtype=bool)


def nodes(labels: dict[str, str], found: list[str]) -> list[str]:
    """Return a call gap's nodes: its callee's (``found``) and, second, its caller's.

    The gap is measured at both ends, so what the caller did explains it as well.
    """
    return [*found, f"service:{labels['client']}"]


def caller_side(
    gaps: np.ndarray,
    names: list[str],
    labels: list[dict[str, str]],
    rise: np.ndarray,
    *,
    ratio: float,
) -> np.ndarray:
    """Say which call gaps are their caller's: its gaps to two services or more rose alike.

    A caller slow to send or to read its answers (starved of CPU, its own network) widens
    the gap of every call it makes by much the same time; its own spans tell that, not its
    callees. ``gaps`` marks the call gaps, ``rise`` each row's rise in seconds (0 where it
    did not move up); alike is at least ``ratio`` of the caller's largest rise at that
    statistic.
    """
    gap = gaps & (rise > 0)
    largest: dict[tuple[str, str], float] = {}
    for i in np.flatnonzero(gap):
        key = (labels[i]["client"], names[i])
        largest[key] = max(largest.get(key, 0.0), float(rise[i]))
    servers: dict[tuple[str, str], set[str]] = {}
    for i in np.flatnonzero(gap):
        key = (labels[i]["client"], names[i])
        if rise[i] >= ratio * largest[key]:
            servers.setdefault(key, set()).add(labels[i]["server"])
    return gap & np.array(
        [
            len(servers.get((lbl.get("client", ""), n), ())) >= 2
            for n, lbl in zip(names, labels, strict=True)
        ],
        dtype=bool,
    )
