"""Where the agent's batches go: each destination has its own spool, sender and counters.

With causeline's ingest and a remote-write endpoint both configured, every batch
is written into both spools and each sender drains its own, so one destination
that is down neither holds back nor repeats the other's deliveries.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from collector.health import AgentHealth
from collector.schema import Batch
from collector.spool import Spool

log = logging.getLogger(__name__)


class BatchSink(Protocol):
    """What the agent writes each cut batch into (a spool)."""

    health: AgentHealth

    def put(self, batch: Batch) -> object:
        """Keep one batch for delivery; raise OSError when it cannot be kept."""
        ...


class Sender(Protocol):
    """A delivery thread the agent starts, wakes, drains and stops."""

    def wake(self) -> None:
        """Tell the sender that a batch is waiting."""
        ...

    def start(self) -> None:
        """Start delivering in the background."""
        ...

    def stop(self, flush_seconds: float = 5.0) -> None:
        """Stop, after trying to deliver what is left for ``flush_seconds``."""
        ...

    def drain(self, deadline: float | None = None) -> bool:
        """Deliver until the spool is empty (True), a send fails or ``deadline`` passes."""
        ...


@dataclass(frozen=True)
class Destination:
    """One place batches go, with its own spool and sender."""

    name: str
    spool: Spool
    sender: Sender


class Destinations:
    """Several destinations behind one spool and one sender for the agent."""

    def __init__(self, destinations: Sequence[Destination], *, health: AgentHealth):
        self.items = list(destinations)
        self.health = health

    def put(self, batch: Batch) -> None:
        """Spool the batch for every destination; a failing disk for one spares the others."""
        for dest in self.items:
            try:
                dest.spool.put(batch)
            except OSError as exc:
                dest.spool.health.count("samples_dropped", batch.sample_count)
                log.error(
                    "cannot spool a batch of %d samples for %s: %s",
                    batch.sample_count,
                    dest.name,
                    exc,
                )

    def wake(self) -> None:
        """Wake every sender."""
        for dest in self.items:
            dest.sender.wake()

    def start(self) -> None:
        """Start every sender."""
        for dest in self.items:
            dest.sender.start()

    def stop(self, flush_seconds: float = 5.0) -> None:
        """Stop every sender, each flushing for up to ``flush_seconds``."""
        for dest in self.items:
            dest.sender.stop(flush_seconds)

    def drain(self, deadline: float | None = None) -> bool:
        """Drain every destination in turn; True when all of them are empty."""
        results = [dest.sender.drain(deadline) for dest in self.items]
        return all(results)
