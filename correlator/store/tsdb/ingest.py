"""Store a validated batch atomically: series, samples and events in one transaction."""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Engine

from collector.schema import Batch, SeriesBatch
from correlator.store.engine import write_transaction
from correlator.store.events import insert_events
from correlator.store.tsdb.deltas import cumulate
from correlator.store.tsdb.series import ensure_series, series_ids_by_key
from correlator.store.tsdb.write import columns_of, insert_columns, sample_columns


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What a batch did to the store."""

    series: int
    samples: int
    inserted: int
    events: int
    markers: int = 0  # stale markers stored (no-value samples of known series)


class SeriesCache:
    """Series identity (``series_ident``) -> id, filled only after the creating commit.

    An entry holds its label strings: about 430 bytes for a series with two labels.
    """

    def __init__(self, max_size: int = 1_000_000):
        self._ids: dict[tuple, int] = {}
        self._lock = threading.Lock()
        self._max_size = max_size

    def lookup(self, idents: list[tuple]) -> tuple[dict[tuple, int], list[tuple]]:
        """Return (known identity -> id, unknown identities)."""
        known, missing = {}, []
        for ident in idents:
            sid = self._ids.get(ident)
            if sid is None:
                missing.append(ident)
            else:
                known[ident] = sid
        return known, missing

    def remember(self, ids: dict[tuple, int]) -> None:
        """Add committed ids; start over when the cache grows past its bound."""
        with self._lock:
            if len(self._ids) + len(ids) > self._max_size:
                self._ids.clear()
            self._ids.update(ids)


# One lock per SQLite engine: this process's batches queue here, not in SQLite's busy sleeps.
_writers: weakref.WeakKeyDictionary[Engine, threading.Lock] = weakref.WeakKeyDictionary()
_writers_guard = threading.Lock()


@contextmanager
def _batch_transaction(engine: Engine) -> Iterator[Connection]:
    """Yield a write transaction; on SQLite, one batch of this process at a time."""
    if engine.dialect.name != "sqlite":
        with write_transaction(engine) as conn:
            yield conn
        return
    with _writers_guard:
        lock = _writers.setdefault(engine, threading.Lock())
    with lock, write_transaction(engine) as conn:
        yield conn


def store_batch(
    *,
    engine: Engine,
    batch: Batch,
    cache: SeriesCache | None = None,
    deltas: Sequence[SeriesBatch] = (),
    markers: Sequence[SeriesBatch] = (),
) -> IngestResult:
    """Write a whole batch or nothing; (series, ts) pairs and event ids already stored are kept.

    ``deltas`` hold increments (OTLP delta sums): each is stored as the series' running total
    (``correlator.store.tsdb.deltas``) in the same transaction. ``markers`` hold staleness markers
    (the times a series stopped): stored as samples without a value (NULL) for series the
    store or this batch already holds; a marker of a series never seen creates nothing.
    """
    cache = cache or SeriesCache()
    idents = [s.ident for s in batch.series]
    delta_idents = [s.ident for s in deltas]
    keyed = dict(zip(idents, batch.series, strict=True))
    keyed.update(zip(delta_idents, deltas, strict=True))
    known, missing = cache.lookup(list(keyed))
    new_ids: dict[tuple, int] = {}
    with _batch_transaction(engine) as conn:
        if missing:
            stored = {keyed[i].key: i for i in missing}  # the store knows series by series_key
            created = ensure_series(
                conn=conn, items={k: (keyed[i].name, keyed[i].labels) for k, i in stored.items()}
            )
            new_ids = {stored[k]: sid for k, sid in created.items()}
        ids = known | new_ids
        cols = sample_columns(
            [ids[i] for i in idents],
            [s.timestamps for s in batch.series],
            [s.values for s in batch.series],
        )
        samples = len(cols)
        totals = []
        if deltas:
            totals = cumulate(conn=conn, ids=[ids[i] for i in delta_idents], series=deltas)
            samples += sum(len(s.timestamps) for s in deltas)
        inserted = insert_columns(conn=conn, cols=cols)
        # Totals go keyed, after: a later late point raises stored ones in place.
        inserted += insert_columns(conn=conn, cols=columns_of(totals), runs_ok=False)
        events = insert_events(conn=conn, events=batch.events)
        stored_markers = _insert_markers(conn, markers, ids, cache) if markers else 0
    cache.remember(new_ids)
    return IngestResult(
        series=len(keyed),
        samples=samples,
        inserted=inserted,
        events=events,
        markers=stored_markers,
    )


def _insert_markers(
    conn: Connection, markers: Sequence[SeriesBatch], ids: dict[tuple, int], cache: SeriesCache
) -> int:
    """Store staleness markers (NULL samples) of series already known; return how many."""
    idents = [m.ident for m in markers]
    known, missing = cache.lookup([i for i in idents if i not in ids])
    by_key = {m.key: m.ident for m in markers if m.ident in missing}
    found = series_ids_by_key(conn=conn, keys=list(by_key))
    known |= ids | {by_key[k]: sid for k, sid in found.items()}
    kept = [m for m in markers if m.ident in known]
    if not kept:
        return 0
    cols = sample_columns(
        [known[m.ident] for m in kept],
        [m.timestamps for m in kept],
        [[math.nan] * len(m.timestamps) for m in kept],  # no value: stopped here
    )
    return insert_columns(conn=conn, cols=cols)
