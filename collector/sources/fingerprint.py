"""Send the environment fingerprint at start and whenever it changes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import httpx

from collector.fingerprint import diff_fingerprints, fingerprint_hash
from collector.fingerprint_api import post_fingerprint
from collector.reading import Reading
from collector.schema import Event

log = logging.getLogger(__name__)


class FingerprintSource:
    """A thread that re-collects the fingerprint every ``interval`` and posts changes."""

    name = "fingerprint"

    def __init__(
        self,
        collect: Callable[[], dict],
        *,
        host: str,
        server: str | None,
        token: str | None,
        client: httpx.Client | None = None,
        interval: float = 3600.0,
        retry: float = 30.0,
        wallclock: Callable[[], float] = time.time,
        start_thread: bool = True,
    ):
        self._collect = collect
        self._host = host
        self._server = server
        self._token = token
        self._client = client or httpx.Client(timeout=10.0)
        self._interval = interval
        self._retry = retry
        self._wallclock = wallclock
        self._lock = threading.Lock()
        self._events: list[Event] = []
        self._last: dict | None = None
        self.sent_hash: str | None = None
        self._stop = threading.Event()
        self._thread = None
        if start_thread:
            self._thread = threading.Thread(
                target=self._run, name="causeline-fingerprint", daemon=True
            )
            self._thread.start()

    def check(self) -> bool:
        """Collect once; post it when it differs from the last one sent. Return success."""
        fp = self._collect()
        ts = self._wallclock()
        if self._last is not None and (changes := diff_fingerprints(self._last, fp)):
            summary = ", ".join(f"{d.path}: {d.a} -> {d.b}" for d in changes[:5])
            with self._lock:
                self._events.append(
                    Event(
                        id=f"env-{self._host}-{int(ts * 1000)}",
                        ts=ts,
                        kind="env_change",
                        summary=f"environment of {self._host} changed: {summary}",
                        labels={"host": self._host},
                    )
                )
        self._last = fp
        digest = fingerprint_hash(fp)
        if digest == self.sent_hash or not self._server:
            return True
        try:
            post_fingerprint(
                self._client,
                self._server,
                self._token or "",
                host=self._host,
                fingerprint=fp,
                ts=ts,
            )
        except httpx.HTTPError as exc:
            log.warning("fingerprint not delivered (%s); will retry", exc)
            return False
        self.sent_hash = digest
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ok = self.check()
            except Exception as exc:  # noqa: BLE001 - keep the thread alive
                log.warning("fingerprint collection failed: %s", exc)
                ok = False
            self._stop.wait(self._interval if ok else self._retry)

    def sample(self) -> Reading:
        """Return the environment-change events seen since the last call."""
        out = Reading()
        with self._lock:
            out.events, self._events = self._events, []
        return out

    def close(self) -> None:
        """Stop the thread."""
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=15)
