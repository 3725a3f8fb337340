"""Accumulation of readings into columnar batches, cut by size and by age."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from collector.reading import Reading
from collector.schema import Batch, Event, SeriesBatch, series_key


class Batcher:
    """Collect timestamped readings until ``max_samples`` or ``max_age`` seconds."""

    def __init__(
        self,
        *,
        max_samples: int = 50_000,
        max_age: float = 10.0,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ):
        self.max_samples = max_samples
        self.max_age = max_age
        self._new_id = new_id
        self._series: dict[str, SeriesBatch] = {}
        self._events: list[Event] = []
        self._samples = 0
        self._opened: float | None = None

    def add(self, ts: float, reading: Reading, now: float) -> None:
        """Append a reading taken at unix time ``ts``."""
        series = self._series
        for s in reading.samples:
            key = series_key(s.name, s.labels)
            target = series.get(key)
            if target is None:
                target = series[key] = SeriesBatch(s.name, s.labels, [], [])
            target.timestamps.append(ts)
            target.values.append(s.value)
        self._samples += len(reading.samples)
        self._events.extend(reading.events)
        if self._opened is None and (reading.samples or reading.events):
            self._opened = now

    def due(self, now: float) -> bool:
        """Return whether the open batch should be cut."""
        if self._opened is None:
            return False
        return self._samples >= self.max_samples or now - self._opened >= self.max_age

    def take(self) -> Batch | None:
        """Return the open batch (None when empty) and start a new one."""
        if self._opened is None:
            return None
        batch = Batch(
            series=list(self._series.values()), events=self._events, batch_id=self._new_id()
        )
        self._series, self._events, self._samples, self._opened = {}, [], 0, None
        return batch
