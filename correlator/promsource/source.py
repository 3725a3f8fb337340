"""The Prometheus side of the per-metric choice: serves the mapped metrics for store windows."""

from __future__ import annotations

import os
from functools import lru_cache

from correlator.bundle import Series
from correlator.promsource.mapping import Mapping, load_mapping
from correlator.promsource.reader import PrometheusReader
from correlator.selector import Selector


class PrometheusSource:
    """A metric source for ``correlator.store.windows``: mapped metrics come from Prometheus."""

    def __init__(self, reader: PrometheusReader, *, step: float | None = None):
        self.reader = reader
        self.step = step

    @property
    def metrics(self) -> frozenset[str]:
        """Return the vocabulary names read from Prometheus."""
        return self.reader.mapping.metrics

    def read(self, *, names, start: float, end: float) -> list[Series]:
        """Return the named metrics' series in [start, end]."""
        return self.reader.read(names, start, end, self.step)

    def select(self, selector: Selector, *, start: float, end: float) -> list[Series]:
        """Return the series a selector picks (label matchers applied after mapping)."""
        names = [selector.name] if selector.name else sorted(self.metrics)
        found = self.read(names=names, start=start, end=end)
        return [s for s in found if selector.matches(s.name, s.labels)]


def make_source(
    url: str,
    mapping: Mapping | str | None = None,
    *,
    step: float | None = None,
    timeout: float = 30.0,
    retries: int = 3,
) -> PrometheusSource:
    """Return a source for a server URL and a mapping (object, file path, or built-in)."""
    if not isinstance(mapping, Mapping):
        mapping = load_mapping(mapping)
    reader = PrometheusReader(url, mapping, timeout=timeout, retries=retries)
    return PrometheusSource(reader, step=step)


def source_from_settings(settings) -> PrometheusSource | None:
    """Return the configured source, or None when no Prometheus URL is set."""
    if not getattr(settings, "prometheus_url", None):
        return None
    return _cached(
        settings.prometheus_url,
        settings.prometheus_mapping,
        settings.prometheus_step_seconds,
        settings.prometheus_timeout_seconds,
        settings.prometheus_retries,
    )


@lru_cache(maxsize=8)
def _cached(url, mapping, step, timeout, retries) -> PrometheusSource:
    return make_source(url, mapping, step=step, timeout=timeout, retries=retries)


def source_from_env() -> PrometheusSource | None:
    """Return the source CAUSELINE_PROMETHEUS_* variables configure, or None."""
    if not os.environ.get("CAUSELINE_PROMETHEUS_URL"):
        return None
    from correlator.settings import ServiceSettings

    return source_from_settings(ServiceSettings())
