"""Delivery of spooled batches to the ingest API, oldest first, with backoff.

``SpoolSender`` is the delivery thread every destination shares (spool, backoff,
drain on stop); ``Shipper`` sends to causeline's ingest API. A batch leaves its
spool only once the service answered 200 (stored) or 422 (refused for good: set
aside in ``rejected/``). Connection errors, 429 and 5xx are retried with
exponential backoff and full jitter; the service stores each (series,
timestamp) once, so a repeated send never double-counts. A refused token (401, 403)
keeps the data but is no passing fault: the sender says so as an error every
``REFUSED_RETRY_S``, tries again only that often, and reports
``causeline_agent_token_refused`` 1 until a send succeeds.
"""

from __future__ import annotations

import gzip
import json
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import TypedDict, Unpack

import httpx

from collector.health import AgentHealth
from collector.schema import BatchError, parse_batch
from collector.spool import Spool, SpoolEntry

log = logging.getLogger(__name__)
INGEST_PATH = "/api/v1/ingest"
REFUSED_RETRY_S = 300.0  # a refused token is retried this often (a new one may be issued)


class Backoff:
    """Exponential backoff with full jitter: ``uniform(0, min(cap, base * 2**n))``."""

    def __init__(
        self, base: float = 0.5, cap: float = 30.0, rng: Callable[[], float] = random.random
    ):
        self.base, self.cap, self._rng = base, cap, rng
        self.failures = 0

    def next_delay(self) -> float:
        """Return the wait before the next try and count a failure."""
        ceiling = min(self.cap, self.base * (2 ** min(self.failures, 30)))
        self.failures += 1
        return max(self.base / 2, ceiling * self._rng())

    def reset(self) -> None:
        """Forget past failures."""
        self.failures = 0


class SenderOptions(TypedDict, total=False):
    """What every spool sender may be given beside its destination: injected parts."""

    client: httpx.Client | None  # default: one of its own, with the sender's timeout
    backoff: Backoff | None
    health: AgentHealth | None  # default: the spool's
    wallclock: Callable[[], float]


class SpoolSender:
    """A thread that drains a spool, oldest first, with backoff; subclasses define ``send_one``."""

    thread_name = "causeline-sender"

    def __init__(
        self,
        spool: Spool,
        *,
        client: httpx.Client | None = None,
        timeout: float = 10.0,
        backoff: Backoff | None = None,
        health: AgentHealth | None = None,
        wallclock: Callable[[], float] = time.time,
    ):
        self.spool = spool
        self.url = ""  # set by the subclass; named in the logs
        self._client = client or httpx.Client(timeout=timeout)
        self._own_client = client is None
        self.backoff = backoff or Backoff()
        self.health = health or spool.health
        self._wallclock = wallclock
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._wait: float | None = None  # the next retry's wait, when not the backoff's

    def wake(self) -> None:
        """Tell the thread that a new batch is in the spool."""
        self._wake.set()

    def send_one(self) -> bool | None:
        """Try the oldest batch: True done with it, False failed (retry), None nothing to send."""
        raise NotImplementedError

    def _delivered(self, entry: SpoolEntry) -> bool:
        self.spool.remove(entry)
        self.health.sent(entry.samples, self._wallclock())
        self.health.token_refused = False
        self.backoff.reset()
        return True

    def _refused(self, entry: SpoolEntry, why: str) -> bool:
        """Keep the batch after a refused token; say so as an error, retry only now and then."""
        self.health.count("send_failures")
        self.health.token_refused = True
        self._wait = REFUSED_RETRY_S
        log.error(
            "%s refused the token (%s): nothing is delivered until it is fixed (--token, or "
            "`causeline token create NAME` on the service); %d batch(es) kept in %s, next try "
            "in %.0f s",
            self.url,
            why,
            len(self.spool),
            self.spool.directory,
            REFUSED_RETRY_S,
        )
        return False

    def _failed(self, entry: SpoolEntry, why: str) -> bool:
        self.health.count("send_failures")
        level = logging.WARNING if self.backoff.failures < 3 else logging.DEBUG
        log.log(
            level,
            "send of %s to %s failed (%s); %d batch(es) spooled, will retry",
            entry.name,
            self.url,
            why,
            len(self.spool),
        )
        return False

    def drain(self, deadline: float | None = None) -> bool:
        """Send until the spool is empty, a send fails or ``deadline`` passes."""
        while deadline is None or time.monotonic() < deadline:
            result = self.send_one()
            if result is None:
                return True
            if result is False:
                return False
        return len(self.spool) == 0

    def _run(self) -> None:
        while not self._stop.is_set():
            result = self.send_one()
            if result is None:
                self._wake.wait(1.0)
                self._wake.clear()
            elif result is False:
                wait, self._wait = self._wait, None
                self._stop.wait(wait if wait is not None else self.backoff.next_delay())

    def start(self) -> None:
        """Start the delivery thread."""
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self, flush_seconds: float = 5.0) -> None:
        """Stop the thread, then try to deliver what is left for ``flush_seconds``."""
        self._stop.set()
        self._wake.set()
        if self._thread:
            self._thread.join(timeout=30)
        if (
            flush_seconds > 0
            and len(self.spool)
            and not self.drain(time.monotonic() + flush_seconds)
        ):
            log.warning(
                "%d batch(es) left in %s for the next start", len(self.spool), self.spool.directory
            )
        if self._own_client:
            self._client.close()


class Shipper(SpoolSender):
    """A thread that drains the spool into ``POST {server}/api/v1/ingest``."""

    thread_name = "causeline-shipper"

    def __init__(
        self,
        spool: Spool,
        *,
        server: str,
        token: str,
        timeout: float = 10.0,
        **options: Unpack[SenderOptions],
    ):
        super().__init__(spool, timeout=timeout, **options)
        self.url = server.rstrip("/") + INGEST_PATH
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Content-Encoding": "gzip",
            "Content-Type": "application/json",
        }

    def send_one(self) -> bool | None:
        """Try to deliver the oldest batch: True sent, False failed, None nothing to send."""
        entry = self.spool.oldest()
        if entry is None:
            return None
        try:
            body = self.spool.read(entry)
        except FileNotFoundError:  # dropped by the size bound meanwhile
            self.spool.remove(entry)
            return True
        try:
            resp = self._client.post(self.url, content=body, headers=self._headers)
        except httpx.HTTPError as exc:
            return self._failed(entry, f"{type(exc).__name__}: {exc}")
        if resp.status_code == 200:
            return self._delivered(entry)
        if resp.status_code == 422:
            target = self.spool.set_aside(entry)
            self.health.count("batches_rejected")
            log.error(
                "service refused batch %s (%s); set aside in %s",
                entry.name,
                resp.text[:300],
                target,
            )
            return True
        if resp.status_code == 413:
            return self._split(entry, body)
        if resp.status_code in (401, 403):
            return self._refused(entry, f"HTTP {resp.status_code}: {resp.text[:200]}")
        return self._failed(entry, f"HTTP {resp.status_code}: {resp.text[:200]}")

    def _split(self, entry: SpoolEntry, body: bytes) -> bool:
        try:
            batch = parse_batch(json.loads(gzip.decompress(body)))
        except BatchError as exc:  # the service would refuse its halves too: keep it aside
            target = self.spool.set_aside(entry)
            self.health.count("batches_rejected")
            log.error("batch %s breaks the contract (%s); set aside in %s", entry.name, exc, target)
            return True
        if len(batch.series) < 2:
            target = self.spool.set_aside(entry)
            log.error(
                "batch %s too large for the service even alone; set aside in %s", entry.name, target
            )
            return True
        half = len(batch.series) // 2
        seq = entry.name.split("-")[0]
        first = type(batch)(
            series=batch.series[:half], events=batch.events, batch_id=f"{batch.batch_id}a"
        )
        second = type(batch)(series=batch.series[half:], batch_id=f"{batch.batch_id}b")
        self.spool.put(first, seq=seq + "a")
        self.spool.put(second, seq=seq + "b")
        self.spool.remove(entry)
        return True
