"""The agent's ``/metrics``: the latest readings of every source plus its own health."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import Metric

from collector.reading import Reading


class ReadingCollector:
    """A prometheus_client collector over a function returning the latest reading."""

    def __init__(self, latest: Callable[[], Reading]):
        self._latest = latest

    def collect(self):
        """Yield one untyped family per metric name."""
        families: dict[str, Metric] = {}
        for s in self._latest().samples:
            family = families.get(s.name)
            if family is None:
                family = families[s.name] = Metric(s.name, f"causeline agent: {s.name}", "unknown")
            family.add_sample(s.name, s.labels, s.value)
        yield from families.values()


def serve_metrics(latest: Callable[[], Reading], *, port: int, addr: str = "0.0.0.0"):
    """Serve ``/metrics`` on ``addr:port`` in a thread; return ``(server, thread)``."""
    registry = CollectorRegistry()
    registry.register(ReadingCollector(latest))
    return start_http_server(port, addr=addr, registry=registry)
