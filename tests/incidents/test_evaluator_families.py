"""The evaluator reads a source metric once a pass for all the SLAs on it, not once per SLA."""

from __future__ import annotations

import numpy as np

from correlator.bundle import Series
from correlator.incidents.evaluator import evaluate_once
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.slas import upsert_sla
from tests.helpers import p99_sla

NOW = 1_733_131_500.0
MODELS = [f"m{i}" for i in range(1, 6)]


class FleetSource:
    """A Prometheus-like source of five models' latency; m3 breaches. Records every read."""

    metrics = frozenset({"model_latency_p99_ms", "gpu_utilization_percent"})

    def __init__(self):
        self.calls: list[tuple[str, tuple, dict | None]] = []

    def _series(self, names, start, end) -> list[Series]:
        ts = np.arange(start, end + 1, 15.0)
        out = []
        if "model_latency_p99_ms" in names:
            for m in MODELS:
                high = m == "m3"
                values = np.where(high & (ts > end - 600), 300.0, 40.0)
                out.append(Series("model_latency_p99_ms", {"model": m}, ts, values))
        return out

    def read(self, *, names, start, end):
        self.calls.append(("read", tuple(names), None))
        return self._series(names, start, end)

    def count(self, *, names, at):
        return 5 * len(names)

    def read_in_scope(self, *, names, start, end, values, max_series):
        self.calls.append(("read_in_scope", tuple(names), values))
        wanted = values.get("model")
        found = self._series(names, start, end)
        return [s for s in found if not wanted or s.labels["model"] in wanted], []


def test_one_read_for_five_slas_on_one_metric(engine):
    with write_transaction(engine) as conn:
        for m in MODELS:
            upsert_sla(conn=conn, sla=p99_sla(m, threshold=100))
    source = FleetSource()
    report = evaluate_once(engine, holder="me", now=NOW, settings=ServiceSettings(), source=source)
    assert report["checked"] == 5 and len(report["opened"]) == 1, report
    assert report["slas"]["m3 p99"].startswith("breaching")
    family = [c for c in source.calls if c[1] == ("model_latency_p99_ms",)]
    assert family == [("read_in_scope", ("model_latency_p99_ms",), {"model": set(MODELS)})]
