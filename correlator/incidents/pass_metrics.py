"""The SLA evaluator's own figures as Prometheus metrics, read from its PassStats on scrape."""

from __future__ import annotations

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from correlator.incidents.evaluator import PassStats


class PassCollector:
    """Collect how many passes this process ran, how long they took, and whether it leads."""

    def __init__(self, stats: PassStats):
        self._stats = stats

    def collect(self):
        """Yield the counters and gauges (called by the registry on every scrape)."""
        s = self._stats
        yield CounterMetricFamily(
            "causeline_evaluator_passes",
            "SLA evaluation passes this process ran holding the evaluator lease",
            value=s.passes,
        )
        yield CounterMetricFamily(
            "causeline_evaluator_passes_skipped",
            "Passes this process left to the replica holding the lease",
            value=s.skipped,
        )
        yield CounterMetricFamily(
            "causeline_evaluator_pass_seconds",
            "Seconds spent in the passes this process ran",
            value=s.seconds,
        )
        yield GaugeMetricFamily(
            "causeline_evaluator_lease_held",
            "1 when this process held the evaluator lease at its last pass",
            value=int(s.holds_lease),
        )
        if s.last_seconds is not None:
            yield GaugeMetricFamily(
                "causeline_evaluator_last_pass_seconds",
                "How long the last pass this process ran took",
                value=s.last_seconds,
            )
            yield GaugeMetricFamily(
                "causeline_evaluator_last_pass_timestamp_seconds",
                "When the last pass this process ran ended (unix seconds)",
                value=s.last_at or 0.0,
            )
            yield GaugeMetricFamily(
                "causeline_evaluator_last_pass_slas",
                "SLAs the last pass this process ran checked",
                value=s.last_checked,
            )

    def describe(self):
        """Return nothing: the figures are read on scrape."""
        return []
