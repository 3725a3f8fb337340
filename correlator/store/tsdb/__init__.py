"""The sample engine: series, samples and their upkeep, behind one face.

Everything outside this package calls the names in ``__all__`` and nothing else
(``tests/test_layering.py`` holds it to that). ``SampleStore`` is the same surface as a
protocol: the functions another engine for samples must provide, checked against this
package by mypy (``tests/store/tsdb/test_face.py``).

Inside, one module a concern: ``ingest`` (a batch in), ``write`` and ``read`` (the two
paths of samples), ``head`` (fresh samples as runs), ``chunks`` and ``codec`` (compacted
hours), ``compaction``, ``rollups`` and ``rollup_state`` (1-minute rollups), ``retention``,
``partitions`` (PostgreSQL's daily partitions), ``series`` and ``labels`` (the series
index), ``deltas`` (OTLP delta sums as running totals), ``bounds`` (read limits).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from sqlalchemy import Connection, Engine

from collector.schema import Batch, SeriesBatch
from correlator.selector import Selector
from correlator.store.tsdb.bounds import ReadBoundError, TooManyPoints, check_deadline
from correlator.store.tsdb.compaction import CompactionReport, compact
from correlator.store.tsdb.deltas import DeltaOverflow
from correlator.store.tsdb.ingest import IngestResult, SeriesCache, store_batch
from correlator.store.tsdb.labels import label_keys_of, label_names, label_values, metric_names
from correlator.store.tsdb.partitions import create_partitions
from correlator.store.tsdb.read import SeriesData, read_range, time_bounds
from correlator.store.tsdb.retention import (
    RetentionReport,
    periodic,
    run_retention,
    run_retention_job,
)
from correlator.store.tsdb.rollups import RollupReport, roll_up
from correlator.store.tsdb.series import SeriesInfo, ensure_series, find_series, match_series
from correlator.store.tsdb.write import Numbers, SampleColumns, insert_columns, sample_columns

__all__ = [
    "CompactionReport",
    "DeltaOverflow",
    "IngestResult",
    "Numbers",
    "ReadBoundError",
    "RetentionReport",
    "RollupReport",
    "SampleColumns",
    "SampleStore",
    "SeriesCache",
    "SeriesData",
    "SeriesInfo",
    "TooManyPoints",
    "check_deadline",
    "compact",
    "create_partitions",
    "ensure_series",
    "find_series",
    "insert_columns",
    "label_keys_of",
    "label_names",
    "label_values",
    "match_series",
    "metric_names",
    "periodic",
    "read_range",
    "roll_up",
    "run_retention",
    "run_retention_job",
    "sample_columns",
    "store_batch",
    "time_bounds",
]


class SampleStore(Protocol):
    """What the product asks of a sample engine; this package is the SQL one."""

    def store_batch(
        self,
        *,
        engine: Engine,
        batch: Batch,
        cache: SeriesCache | None = None,
        deltas: Sequence[SeriesBatch] = (),
        markers: Sequence[SeriesBatch] = (),
    ) -> IngestResult:
        """Store a batch of series (and OTLP deltas, staleness markers) in one transaction."""

    def ensure_series(
        self, *, conn: Connection, items: dict[str, tuple[str, dict[str, str]]]
    ) -> dict[str, int]:
        """Return the id of each (name, labels), creating the series that are new."""

    def sample_columns(
        self,
        series_ids: Sequence[int],
        timestamps: Sequence[Numbers],
        values: Sequence[Numbers],
    ) -> SampleColumns:
        """Return samples of several series as storable columns."""

    def insert_columns(self, *, conn: Connection, cols: SampleColumns, runs_ok: bool = True) -> int:
        """Insert samples, skipping stored ones; return how many were new."""

    def read_range(
        self,
        *,
        conn: Connection,
        series_ids: Iterable[int],
        start: float,
        end: float,
        step: float | None = None,
        max_points: int | None = None,
        deadline: float | None = None,
    ) -> dict[int, SeriesData]:
        """Return each series' samples in [start, end], thinned to a step's extremes."""

    def time_bounds(
        self, *, conn: Connection, not_after: float | None = None
    ) -> tuple[float, float] | None:
        """Return the first and last stored sample time, or None when empty."""

    def find_series(
        self,
        *,
        conn: Connection,
        selector: Selector,
        limit: int | None = None,
        deadline: float | None = None,
    ) -> list[SeriesInfo]:
        """Return the series a selector matches."""

    def match_series(
        self,
        *,
        engine: Engine,
        selector: Selector,
        limit: int | None = None,
        deadline: float | None = None,
    ) -> list[SeriesInfo]:
        """Return the series a selector matches, in a read of its own."""

    def metric_names(
        self, *, conn: Connection, limit: int, contains: str | None = None
    ) -> list[tuple[str, int]]:
        """Return metric names with their series counts."""

    def label_names(self, *, conn: Connection, limit: int) -> list[str]:
        """Return the label names in use."""

    def label_values(self, *, conn: Connection, name: str, limit: int) -> list[str]:
        """Return the values of one label."""

    def label_keys_of(self, *, conn: Connection, names: list[str]) -> dict[str, list[str]]:
        """Return each metric's label names."""

    def roll_up(
        self,
        *,
        engine: Engine,
        now: float | None = None,
        lag_seconds: float = 300.0,
        max_hours: int = 24,
    ) -> RollupReport:
        """Roll finished hours up into 1-minute rollups."""

    def compact(
        self,
        *,
        engine: Engine,
        now: float | None = None,
        head_seconds: float = 7200.0,
        max_hours: int = 24,
        target: int = ...,
        group_rows: int = ...,
        slice_rows: int | None = None,
        progress: Callable[[int, int, CompactionReport], None] | None = None,
    ) -> CompactionReport:
        """Compact hours past the head into chunks."""

    def run_retention(
        self,
        *,
        engine: Engine,
        raw_days: int = 7,
        rollup_days: int = 90,
        now: float | None = None,
        dry_run: bool = False,
        renew=None,
    ) -> RetentionReport:
        """Drop raw samples and rollups past their retention."""

    def create_partitions(self, *, conn: Connection, days: Iterable[int]) -> list[int]:
        """Create the storage for these UTC days where the engine keeps samples by day."""
