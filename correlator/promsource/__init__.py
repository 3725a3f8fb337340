"""Read metrics from a Prometheus-compatible server through a vocabulary mapping."""

from correlator.promsource.mapping import Mapping, MappingError, MetricRule, load_mapping
from correlator.promsource.reader import PrometheusReader, PromSourceError
from correlator.promsource.source import PrometheusSource, make_source, source_from_settings

__all__ = [
    "Mapping",
    "MappingError",
    "MetricRule",
    "PromSourceError",
    "PrometheusReader",
    "PrometheusSource",
    "load_mapping",
    "make_source",
    "source_from_settings",
]
