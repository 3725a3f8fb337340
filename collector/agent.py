"""The collection loop: sample every source each interval, batch, spool, ship."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from collector.batcher import Batcher
from collector.destination import BatchSink, Sender
from collector.health import AgentHealth
from collector.reading import Reading, Source

log = logging.getLogger(__name__)


class Agent:
    """Run sources on an interval and hand their readings to the spool and shipper."""

    def __init__(
        self,
        sources: list[Source],
        *,
        host: str,
        interval: float = 10.0,
        spool: BatchSink | None = None,
        shipper: Sender | None = None,
        batcher: Batcher | None = None,
        health: AgentHealth | None = None,
        wallclock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ):
        self.sources = sources
        self.host = host
        self.interval = interval
        self.spool = spool
        self.shipper = shipper
        self.batcher = batcher or Batcher(max_age=max(interval, 10.0))
        self.health = health or (spool.health if spool is not None else AgentHealth())
        self.latest = Reading()
        self._wallclock = wallclock
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def collect(self) -> Reading:
        """Sample every source once; a failing source is logged and skipped."""
        out = Reading()
        for source in self.sources:
            try:
                out.extend(source.sample())
            except Exception as exc:  # noqa: BLE001 - one source must not stop the others
                self.health.source_failed(source.name)
                log.warning("source %s failed: %s: %s", source.name, type(exc).__name__, exc)
        self.health.count("samples_collected", len(out.samples))
        out.extend(self.health.reading({"host": self.host}))
        return out

    def step(self) -> Reading:
        """Collect one round, add it to the open batch and spool the batch when due."""
        ts = round(self._wallclock(), 3)
        reading = self.collect()
        with self._lock:
            self.latest = reading
        now = self._monotonic()
        self.batcher.add(ts, reading, now)
        if self.batcher.due(now):
            self.flush()
        return reading

    def flush(self) -> None:
        """Spool the open batch now and wake the shipper."""
        batch = self.batcher.take()
        if batch is None or self.spool is None:
            return
        try:
            self.spool.put(batch)
        except OSError as exc:  # disk full, spool removed: count the loss, keep running
            self.health.count("samples_dropped", batch.sample_count)
            log.error("cannot spool a batch of %d samples: %s", batch.sample_count, exc)
            return
        if self.shipper:
            self.shipper.wake()

    def run(self) -> None:
        """Loop until ``stop()``; rounds start on interval boundaries of the monotonic clock."""
        if self.shipper:
            self.shipper.start()
        next_at = self._monotonic()
        while not self._stop.is_set():
            try:
                self.step()
            except Exception:  # noqa: BLE001 - the loop must outlive any one round
                log.exception("collection round failed")
            next_at += self.interval
            delay = next_at - self._monotonic()
            if delay < 0:  # a slow round: skip the missed ticks, do not burst
                next_at = self._monotonic()
                delay = 0
            self._stop.wait(delay)
        self.flush()
        if self.shipper:
            self.shipper.stop()
        for source in self.sources:
            try:
                source.close()
            except Exception as exc:  # noqa: BLE001
                log.warning("closing source %s: %s", source.name, exc)

    def stop(self) -> None:
        """Ask ``run()`` to flush and return."""
        self._stop.set()
