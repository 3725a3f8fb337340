"""A PromQL subset evaluated over causeline's own samples (docs/prometheus.md)."""
