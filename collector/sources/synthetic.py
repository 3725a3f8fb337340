"""Synthetic inference check: send each model its card's example, validate the answer.

Blackbox-exporter style: ``model_probe_success`` (0/1), ``model_probe_latency_ms``
and ``model_probe_schema_valid`` per target, checked in a thread on the
target's own interval. A failure (and the recovery after it) is an event.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from collector.reading import Reading
from collector.schema import Event
from collector.schema_check import validation_error

log = logging.getLogger(__name__)


@dataclass
class CheckTarget:
    """One endpoint to check and what a good answer looks like."""

    model: str
    url: str
    request: object = None
    output_schema: dict | None = None
    method: str = "POST"
    interval: float = 30.0
    timeout: float = 5.0
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_card(cls, card: dict, *, url: str, **kw) -> CheckTarget:
        """Build a target from a model card's example input and output schema."""
        example = card.get("example_input", (card.get("example") or {}).get("input"))
        schema = card.get("output_schema", (card.get("schema") or {}).get("output"))
        model = kw.pop("model", None) or card.get("name") or card.get("model")
        if not model:
            raise ValueError("the model card names no model: add 'name' to it or 'model' here")
        if example is None:
            raise ValueError(f"model card of {model!r} has no example_input")
        return cls(model=model, url=url, request=example, output_schema=schema, **kw)


class SyntheticCheckSource:
    """Run minimal real inferences against configured endpoints."""

    name = "synthetic"

    def __init__(
        self,
        targets: list[CheckTarget],
        *,
        host: str,
        client: httpx.Client | None = None,
        clock: Callable[[], float] = time.perf_counter,
        wallclock: Callable[[], float] = time.time,
        start_thread: bool = True,
    ):
        self.targets = targets
        self._host = host
        self._client = client or httpx.Client()
        self._clock = clock
        self._wallclock = wallclock
        self._lock = threading.Lock()
        self._latest: dict[str, Reading] = {}
        self._events: list[Event] = []
        self._healthy: dict[str, bool] = {}
        self._stop = threading.Event()
        self._thread = None
        if start_thread and targets:
            self._thread = threading.Thread(
                target=self._run, name="causeline-synthetic", daemon=True
            )
            self._thread.start()

    def check(self, target: CheckTarget) -> tuple[bool, float, str | None]:
        """Run one check: return (success, latency ms, why it failed)."""
        t0 = self._clock()
        try:
            resp = self._client.request(
                target.method,
                target.url,
                timeout=target.timeout,
                json=target.request,
                headers=target.headers,
            )
            latency = (self._clock() - t0) * 1000.0
        except httpx.HTTPError as exc:
            return False, (self._clock() - t0) * 1000.0, f"{type(exc).__name__}: {exc}"
        if resp.status_code >= 400:
            return False, latency, f"HTTP {resp.status_code}"
        if target.output_schema is not None:
            try:
                body = resp.json()
            except (json.JSONDecodeError, ValueError):
                return False, latency, "answer is not JSON"
            if error := validation_error(body, target.output_schema):
                return False, latency, f"answer breaks the output schema: {error}"
        return True, latency, None

    def run_target(self, target: CheckTarget) -> None:
        """Check one target now and keep its readings and events."""
        ok, latency, why = self.check(target)
        labels = {"host": self._host, "model": target.model, "target": target.url}
        out = Reading()
        out.add("model_probe_success", 1 if ok else 0, labels)
        out.add("model_probe_latency_ms", latency, labels)
        if target.output_schema is not None:
            out.add("model_probe_schema_valid", 0 if why and "schema" in why else 1, labels)
        was = self._healthy.get(target.url)
        self._healthy[target.url] = ok
        event = None
        ts = self._wallclock()
        if not ok and was is not False:
            event = Event(
                id=f"probe-fail-{target.model}-{self._host}-{int(ts * 1000)}",
                ts=ts,
                kind="probe_failure",
                summary=f"synthetic inference of {target.model} failed: {why}",
                labels=dict(labels),
            )
            log.warning("%s", event.summary)
        elif ok and was is False:
            event = Event(
                id=f"probe-ok-{target.model}-{self._host}-{int(ts * 1000)}",
                ts=ts,
                kind="probe_recovered",
                summary=f"synthetic inference of {target.model} succeeds again",
                labels=dict(labels),
            )
        with self._lock:
            self._latest[target.url] = out
            if event:
                self._events.append(event)

    def _run(self) -> None:
        due = dict.fromkeys(range(len(self.targets)), 0.0)
        while not self._stop.is_set():
            now = time.monotonic()
            for i, target in enumerate(self.targets):
                if now >= due[i]:
                    self.run_target(target)
                    due[i] = now + target.interval
            self._stop.wait(max(0.05, min(due.values()) - time.monotonic()))

    def sample(self) -> Reading:
        """Return the latest result of every target and the events since the last call."""
        out = Reading()
        with self._lock:
            for reading in self._latest.values():
                out.extend(reading)
            out.events, self._events = self._events, []
        return out

    def close(self) -> None:
        """Stop the checking thread."""
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
