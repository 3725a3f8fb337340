"""The agent's own health counters, shared by the collector loop and the shipper."""

from __future__ import annotations

import threading
from collections import Counter

from collector.reading import Reading

DELIVERY_COUNTERS = (
    "samples_sent",
    "samples_spooled",
    "samples_dropped",
    "batches_sent",
    "batches_rejected",
    "send_failures",
)


class AgentHealth:
    """Thread-safe counters of what the agent collected, sent, spooled and dropped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counters: Counter[str] = Counter()
        self.source_errors: Counter[str] = Counter()
        self.last_success_ts = 0.0
        self.spool_bytes = 0
        self.spool_files = 0
        self.destinations: dict[str, AgentHealth] = {}
        self.token_refused = False  # the destination refused the token (401/403) last time
        self.own_delivery = True  # False: no unlabelled delivery figures (no causeline ingest)

    def add_destination(self, name: str, health: AgentHealth) -> None:
        """Report another destination's delivery counters with ``destination=name``."""
        self.destinations[name] = health

    def count(self, name: str, n: int = 1) -> None:
        """Add ``n`` to one counter."""
        with self._lock:
            self.counters[name] += n

    def source_failed(self, source: str) -> None:
        """Count one failed ``sample()`` of a source."""
        with self._lock:
            self.source_errors[source] += 1

    def sent(self, samples: int, ts: float) -> None:
        """Record a successful delivery."""
        with self._lock:
            self.counters["samples_sent"] += samples
            self.counters["batches_sent"] += 1
            self.last_success_ts = ts

    def reading(self, labels: dict[str, str]) -> Reading:
        """Return the health figures as samples of ``causeline_agent_*`` series."""
        out = Reading()
        with self._lock:
            out.add(
                "causeline_agent_samples_collected_total",
                self.counters["samples_collected"],
                labels,
            )
            if self.own_delivery:
                self._delivery(out, labels)
            for source, n in self.source_errors.items():
                out.add("causeline_agent_source_errors_total", n, {**labels, "source": source})
        for name, other in self.destinations.items():
            with other._lock:
                other._delivery(out, {**labels, "destination": name})
        return out

    def _delivery(self, out: Reading, labels: dict[str, str]) -> None:
        for key in DELIVERY_COUNTERS:
            out.add(f"causeline_agent_{key}_total", self.counters[key], labels)
        out.add("causeline_agent_last_success_timestamp_seconds", self.last_success_ts, labels)
        out.add("causeline_agent_spool_bytes", self.spool_bytes, labels)
        out.add("causeline_agent_spool_batches", self.spool_files, labels)
        out.add("causeline_agent_token_refused", float(self.token_refused), labels)
