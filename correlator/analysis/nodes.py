"""Node-level reasoning: traffic flows down the call graph, faults show up in their callers."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from correlator.analysis.topology import Topology

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


def node_severity(sev: np.ndarray, primary: list[str | None], keep: np.ndarray) -> dict[str, float]:
    """Return each node's strongest severity over the rows in ``keep``."""
    out: dict[str, float] = {}
    for i in np.flatnonzero(keep & (sev > 0)):
        node = primary[i]
        if node is not None and sev[i] > out.get(node, 0.0):
            out[node] = float(sev[i])
    return out


def shared_by_callers(
    node_sev: dict[str, float],
    up: dict[str, set[str]],
    graph: Topology,
    *,
    ratio: float,
) -> dict[str, int]:
    """Count the anomalous callers of each anomalous node that no callee of its explains.

    A node is explained when something it depends on is anomalous at ``ratio`` of its
    severity or more; its callers then point past it, and it gets no count.
    """
    out = {}
    for n, s in node_sev.items():
        if s <= 0 or any(node_sev.get(m, 0.0) >= ratio * s for m in graph.depends.get(n, ())):
            continue
        out[n] = sum(1 for c in up.get(n, ()) if node_sev.get(c, 0.0) > 0)
    return out


def support_weight(
    primary: list[str | None], shared: dict[str, int], *, step: float, most: int
) -> np.ndarray:
    """Weight a row by ``1 + step x (k - 1)`` for its node's ``k`` anomalous callers (k <= most).

    A fault of a node shows up in every caller of it; a node whose anomaly only one caller
    sees explains less of the incident than one several anomalous callers share.
    """
    out = np.ones(len(primary))
    for i, node in enumerate(primary):
        k = shared.get(node, 0) if node is not None else 0
        if k > 1:
            out[i] = 1.0 + step * (min(k, most) - 1)
    return out
