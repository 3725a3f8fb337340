"""Read serving measurements for capacity planning and the backlog autoscaling signal."""

from __future__ import annotations

import numpy as np
from sqlalchemy import Connection

from correlator.selector import selector_from_labels
from correlator.store.tsdb import find_series, read_range


def _by_instance(conn: Connection, name: str, model: str | None, start: float, end: float):
    labels = {"model": model} if model else {}
    found = find_series(conn=conn, selector=selector_from_labels(name, labels))
    data = read_range(conn=conn, series_ids=[s.id for s in found], start=start, end=end)
    out: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    for s in found:
        if s.id in data:
            key = (s.labels.get("model", ""), s.labels.get("instance", ""))
            out[key] = (data[s.id].ts, data[s.id].values)
    return out


def measured_capacity(
    *,
    conn: Connection,
    model: str,
    sla_latency_ms: float,
    start: float,
    end: float,
    latency_metric: str = "model_latency_p50_ms",
) -> dict:
    """Return the best per-instance QPS within the SLA, and the median ``latency_metric``."""
    qps = _by_instance(conn, "model_requests_per_second", model, start, end)
    p99 = _by_instance(conn, "model_latency_p99_ms", model, start, end)
    p50 = _by_instance(conn, latency_metric, model, start, end)
    best = None
    for key, (ts, values) in qps.items():
        ok = np.isfinite(values)
        if key in p99:
            lat = np.interp(ts, p99[key][0], p99[key][1])
            ok &= lat <= sla_latency_ms
        if ok.any():
            top = float(np.max(values[ok]))
            best = top if best is None else max(best, top)
    finite = [v[np.isfinite(v)] for _, v in p50.values()]
    lat50 = np.concatenate(finite) if finite else np.array([])
    return {
        "qps_per_replica": best,
        "latency_per_request_ms": float(np.median(lat50)) if lat50.size else None,
    }


def latest_load(*, conn: Connection, start: float, end: float) -> dict[str, dict]:
    """Return per model the newest queue length, arrival QPS and instance count in the window."""
    queue = _by_instance(conn, "model_queue_length", None, start, end)
    qps = _by_instance(conn, "model_requests_per_second", None, start, end)
    out: dict[str, dict] = {}
    for source, field in ((queue, "queue_length"), (qps, "arrival_qps")):
        for (model, instance), (_ts, values) in source.items():
            good = values[np.isfinite(values)]
            if not model or not good.size:
                continue
            row = out.setdefault(
                model, {"queue_length": 0.0, "arrival_qps": 0.0, "instances": set()}
            )
            row[field] += float(good[-1])
            row["instances"].add(instance)
    for row in out.values():
        row["instances"] = len(row["instances"])
    return out
