"""The queue-backlog autoscaling signal as Prometheus gauges, read from the store on scrape."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from correlator.incidents.capacity import recommended_replicas
from correlator.store.measures import latest_load
from correlator.store.tables import ModelVersion

if TYPE_CHECKING:
    from sqlalchemy import Connection


def _card_rates(conn: Connection) -> dict[str, float]:
    out: dict[str, float] = {}
    for v in Session(conn).scalars(select(ModelVersion).order_by(ModelVersion.id)):
        rate = ((v.card or {}).get("resource_needs") or {}).get("qps_per_replica")
        if isinstance(rate, int | float) and rate > 0:
            out[v.model] = float(rate)
    return out


class BacklogCollector:
    """Collect causeline_recommended_replicas{model} from queue length and service rate."""

    def __init__(
        self, engine: Engine, *, window: float, drain: float, min_replicas: int, clock=time.time
    ):
        self._engine, self._window, self._drain = engine, window, drain
        self._min, self._clock = min_replicas, clock

    def loads(self) -> dict[str, dict]:
        """Return per model its load and recommended replicas."""
        end = self._clock()
        with self._engine.connect() as conn:
            load = latest_load(conn=conn, start=end - self._window, end=end)
            rates = _card_rates(conn)
        for model, row in load.items():
            per = row["arrival_qps"] / row["instances"] if row["instances"] else 0.0
            row["service_rate"] = rates.get(model) or per
            row["recommended"] = recommended_replicas(
                queue_length=row["queue_length"],
                arrival_qps=row["arrival_qps"],
                service_rate=row["service_rate"],
                drain_seconds=self._drain,
                min_replicas=max(self._min, 1),
            )
        return load

    def collect(self):
        """Yield the gauges (called by the registry on every scrape)."""
        rec = GaugeMetricFamily(
            "causeline_recommended_replicas",
            "Replicas that serve arrivals and drain the queue within the drain time",
            labels=["model"],
        )
        queue = GaugeMetricFamily(
            "causeline_queue_length", "Requests waiting, summed over instances", labels=["model"]
        )
        rate = GaugeMetricFamily(
            "causeline_service_rate_per_replica", "QPS one replica serves", labels=["model"]
        )
        for model, row in sorted(self.loads().items()):
            rec.add_metric([model], row["recommended"])
            queue.add_metric([model], row["queue_length"])
            rate.add_metric([model], row["service_rate"])
        yield from (rec, queue, rate)

    def describe(self):
        """Return nothing, so registering does not scrape the store."""
        return []
