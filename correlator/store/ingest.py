"""Store a validated batch atomically: series, samples and events in one transaction."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

from sqlalchemy import Engine

from collector.schema import Batch, SeriesBatch
from correlator.store.deltas import cumulate
from correlator.store.engine import write_transaction
from correlator.store.events import insert_events
from correlator.store.samples import insert_rows, sample_rows
from correlator.store.series import ensure_series


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What a batch did to the store."""

    series: int
    samples: int
    inserted: int
    events: int


class SeriesCache:
    """Series key -> id, filled only after the transaction that created them committed."""

    def __init__(self, max_size: int = 1_000_000):
        self._ids: dict[str, int] = {}
        self._lock = threading.Lock()
        self._max_size = max_size

    def lookup(self, keys: list[str]) -> tuple[dict[str, int], list[str]]:
        """Return (known key -> id, unknown keys)."""
        known, missing = {}, []
        for key in keys:
            sid = self._ids.get(key)
            if sid is None:
                missing.append(key)
            else:
                known[key] = sid
        return known, missing

    def remember(self, ids: dict[str, int]) -> None:
        """Add committed ids; start over when the cache grows past its bound."""
        with self._lock:
            if len(self._ids) + len(ids) > self._max_size:
                self._ids.clear()
            self._ids.update(ids)


def store_batch(
    *,
    engine: Engine,
    batch: Batch,
    cache: SeriesCache | None = None,
    deltas: Sequence[SeriesBatch] = (),
) -> IngestResult:
    """Write a whole batch or nothing; (series, ts) pairs and event ids already stored are kept.

    ``deltas`` hold increments (OTLP delta sums): each is stored as the series' running total
    (``correlator.store.deltas``) in the same transaction.
    """
    cache = cache or SeriesCache()
    keys = [s.key for s in batch.series]
    delta_keys = [s.key for s in deltas]
    keyed = dict(zip(keys, batch.series, strict=True))
    keyed.update(zip(delta_keys, deltas, strict=True))
    known, missing = cache.lookup(list(keyed))
    new_ids: dict[str, int] = {}
    with write_transaction(engine) as conn:
        if missing:
            new_ids = ensure_series(
                conn=conn, items={k: (keyed[k].name, keyed[k].labels) for k in missing}
            )
        ids = known | new_ids
        rows = sample_rows(
            [ids[k] for k in keys],
            [s.timestamps for s in batch.series],
            [s.values for s in batch.series],
        )
        samples = len(rows)
        if deltas:
            delta_ids = [ids[k] for k in delta_keys]
            rows += cumulate(conn=conn, ids=delta_ids, series=deltas)
            rows.sort(key=itemgetter(0, 1, 2))  # the key order insert_rows expects
            samples += sum(len(s.timestamps) for s in deltas)
        inserted = insert_rows(conn=conn, rows=rows)
        events = insert_events(conn=conn, events=batch.events)
    cache.remember(new_ids)
    return IngestResult(series=len(keyed), samples=samples, inserted=inserted, events=events)
