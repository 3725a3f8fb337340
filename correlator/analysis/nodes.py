"""Node-level reasoning: traffic flows down the call graph, faults show up in their callers."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

_LATENCY = re.compile(r"latency|duration|response_time|elapsed")
_ERROR = re.compile(r"error|availability|fail|timeout|success|fallback|5xx|4xx")
# A NIC's throughput (bytes, packets) is traffic too: it is what callers send.
_TRAFFIC = re.compile(
    r"request|qps|rps|throughput|traffic|calls|invocations"
    r"|network_(receive|transmit)_(bytes|packets)"
)
_WORDS = re.compile(r"[_:.\-]+")
# AWS X-Ray names a node seen only from its callers' side by type: ``<name>_client`` (the
# callers of a service), ``<name>_remote`` (an endpoint measured by whoever calls it).
_XRAY_VIEW = re.compile(r"_(client|remote)$")
# Service meshes label what the caller's proxy measured: Istio ``reporter="source"``,
# Linkerd ``direction="outbound"``.
_MESH_VIEW = (("reporter", "source"), ("direction", "outbound"))


@lru_cache(maxsize=4096)
def metric_kind(name: str) -> str:
    """Return ``latency``, ``error``, ``traffic`` or ``other`` from a metric name's words."""
    low = name.lower()
    if _LATENCY.search(low):
        return "latency"
    if _ERROR.search(low):
        return "error"
    if _TRAFFIC.search(low):
        return "traffic"
    return "other"


def propagates(names: list[str]) -> np.ndarray:
    """Say which rows show a fault of a node below: latency and errors travel up calls."""
    return np.array([metric_kind(n) in ("latency", "error") for n in names], dtype=bool)


def demand(names: list[str]) -> np.ndarray:
    """Say which rows are demand (traffic): set by who sends requests, not by a node's resources."""
    return np.array([metric_kind(n) == "traffic" for n in names], dtype=bool)


def client_side(names: list[str], labels: list[dict[str, str]]) -> np.ndarray:
    """Say which rows are a caller's view of its calls: client latency, CLIENT spans, mesh, X-Ray.

    What a caller waits for is set by what it calls; such a row tells of its callees.
    """
    return np.array(
        [
            "client" in _WORDS.split(name.lower())
            or lbl.get("span_kind", "").upper().endswith("CLIENT")
            or bool(_XRAY_VIEW.search(lbl.get("service", "")))
            or any(lbl.get(k) == v for k, v in _MESH_VIEW)
            for name, lbl in zip(names, labels, strict=True)
        ],
        dtype=bool,
    )


def traffic_weight(
    names: list[str], primary: list[str | None], up: dict[str, set[str]], *, weight: float
) -> np.ndarray:
    """Weight traffic series of called nodes by ``weight``: their load is set by their callers."""
    out = np.ones(len(names))
    for i in np.flatnonzero(demand(names)):
        node = primary[i]
        if node is not None and up.get(node):
            out[i] = weight
    return out


def callers_explained(
    primary: list[str | None], who: np.ndarray, callers: dict[str, set[str]]
) -> dict[str, int]:
    """Count, per node, the callers with an anomaly that an anomaly of the node explains.

    ``who`` holds the row that explains each row (-1: none), ``primary`` each row's node.
    """
    shared: dict[str, set[str]] = {}
    for i, j in enumerate(who):
        node, caller = (primary[j] if j >= 0 else None), primary[i]
        if node is not None and caller is not None and caller in callers.get(node, ()):
            shared.setdefault(node, set()).add(caller)
    return {n: len(c) for n, c in shared.items()}


def support_weight(
    primary: list[str | None], shared: dict[str, int], *, step: float, most: int
) -> np.ndarray:
    """Weight a row by ``1 + step x (k - 1)`` for ``k`` callers its node explains (k <= most).

    A fault of a node shows up in every caller of it; a node that explains one caller's
    anomaly explains less of the incident than one that explains several callers'.
    """
    out = np.ones(len(primary))
    for i, node in enumerate(primary):
        k = shared.get(node, 0) if node is not None else 0
        if k > 1:
            out[i] = 1.0 + step * (min(k, most) - 1)
    return out
