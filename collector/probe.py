"""In-process probe for Python model servers.

Recording a request appends one tuple to an in-memory buffer under a lock
(no I/O, no sketch work on the model thread); ``sample()``, called by the
agent thread, folds the buffer into sketches and histograms::

    probe = Probe(model="click_rank_v3", instance="i-1")
    with probe.request(input_length=len(tokens)) as r:
        r.score = model(tokens)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from collector.reading import Reading
from collector.requests import Request, RequestStats

MAX_BUFFERED = 1_000_000


class RequestHandle:
    """One request in flight; set ``score``, ``batch_size`` or ``status`` on it."""

    __slots__ = ("_probe", "_t0", "input_length", "score", "batch_size", "status")

    def __init__(self, probe: Probe, input_length: float | None):
        self._probe = probe
        self.input_length = input_length
        self.score: float | None = None
        self.batch_size: float | None = None
        self.status: str | None = None
        self._t0 = 0.0

    def __enter__(self) -> RequestHandle:
        self._t0 = self._probe._clock()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        latency_ms = (self._probe._clock() - self._t0) * 1000.0
        status = self.status
        if status is None:
            if exc_type is None:
                status = "ok"
            elif issubclass(exc_type, TimeoutError):
                status = "timeout"
            else:
                status = "error"
        self._probe._append((latency_ms, status, self.batch_size, self.input_length, self.score))


class Probe:
    """Record requests, batch sizes and queue length of one model instance."""

    name = "probe"

    def __init__(
        self,
        *,
        model: str,
        instance: str | None = None,
        version: str | None = None,
        clock: Callable[[], float] = time.perf_counter,
        monotonic: Callable[[], float] = time.monotonic,
        max_buffered: int = MAX_BUFFERED,
    ):
        labels = {"model": model}
        if instance:
            labels["instance"] = instance
        if version:
            labels["version"] = version
        self.labels = labels
        self._clock = clock
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._buffer: list[Request] = []
        self._batches: list[float] = []
        self._max = max_buffered
        self._queue_hook: Callable[[], float] | None = None
        self._queue_length: float | None = None
        self._stats = RequestStats(labels)
        self._window_start = monotonic()
        self.dropped = 0

    def request(self, input_length: float | None = None) -> RequestHandle:
        """Return a context manager that times one request."""
        return RequestHandle(self, input_length)

    def record(
        self,
        latency_ms: float,
        *,
        status: str = "ok",
        batch_size: float | None = None,
        input_length: float | None = None,
        score: float | None = None,
    ) -> None:
        """Record a request measured elsewhere."""
        self._append((latency_ms, status, batch_size, input_length, score))

    def observe_batch(self, size: float) -> None:
        """Record the size of one batch the server formed."""
        with self._lock:
            if len(self._batches) < self._max:
                self._batches.append(size)

    def set_queue_length(self, length: float) -> None:
        """Set the current number of requests waiting for a batch."""
        self._queue_length = length

    def queue_length_hook(self, hook: Callable[[], float]) -> None:
        """Read the queue length from ``hook`` at every sample."""
        self._queue_hook = hook

    def _append(self, item: Request) -> None:
        with self._lock:
            if len(self._buffer) < self._max:
                self._buffer.append(item)
            else:
                self.dropped += 1

    def sample(self) -> Reading:
        """Fold the requests since the last call into the model-side samples."""
        with self._lock:
            buffer, self._buffer = self._buffer, []
            batches, self._batches = self._batches, []
        now = self._monotonic()
        seconds, self._window_start = now - self._window_start, now
        out = self._stats.window(buffer, seconds)
        if batches:
            out.samples = [s for s in out.samples if s.name != "model_batch_size_mean"]
            out.add("model_batch_size_mean", sum(batches) / len(batches), self.labels)
        queue = self._queue_hook() if self._queue_hook else self._queue_length
        if queue is not None:
            out.add("model_queue_length", queue, self.labels)
        if self.dropped:
            out.add("causeline_probe_dropped_total", self.dropped, self.labels)
        return out

    @property
    def last_sketch(self):
        """Return the DDSketch of the last window (merge it across workers)."""
        return self._stats.last_sketch

    def close(self) -> None:
        """Release nothing: the probe holds no outside resources."""
