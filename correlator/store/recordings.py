"""Imported incident windows: where an incident's data starts and ends, its breach, its baseline."""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass

import orjson
from sqlalchemy import Connection, select

from correlator.bundle import MAX_FILE_BYTES, Series, inflate, load_matrix, matrix_document
from correlator.store.dialect import upsert_insert
from correlator.store.tables import Recording

# A baseline blob is refused past this size once inflated (a few days of a few
# hundred series at 15 s is tens of MB): the same cap as a bundle file on import.
MAX_BASELINE_BYTES = MAX_FILE_BYTES


@dataclass(frozen=True, slots=True)
class RecordedWindow:
    """One imported incident: its SLA, data window (unix seconds), declared breach, source."""

    id: int
    sla: str
    start: float
    end: float
    breach_start: float | None
    source: str
    imported_at: float


# Every column but the baseline blob, which only read_baseline loads.
_WINDOW = select(
    Recording.id,
    Recording.sla,
    Recording.start,
    Recording.end,
    Recording.breach_start,
    Recording.source,
    Recording.imported_at,
)


def _windows(conn: Connection, *where) -> list[RecordedWindow]:
    """Return the recordings matching ``where``, oldest window first, without baselines."""
    rows = conn.execute(_WINDOW.where(*where).order_by(Recording.start, Recording.id))
    return [
        RecordedWindow(
            id=r.id,
            sla=r.sla,
            start=r.start,
            end=r.end,
            breach_start=r.breach_start,
            source=r.source,
            imported_at=r.imported_at,
        )
        for r in rows
    ]


def encode_baseline(series: list[Series] | None) -> bytes | None:
    """Return the stored form of a baseline: gzip-compressed query_range JSON."""
    if not series:
        return None
    return gzip.compress(orjson.dumps(matrix_document(series)), compresslevel=6)


def decode_baseline(blob: bytes | None, where: str = "stored baseline") -> list[Series] | None:
    """Return the series of a stored baseline (None when there is none)."""
    if blob is None:
        return None
    return load_matrix(inflate(blob, where, MAX_BASELINE_BYTES), where)


def save_recording(
    *,
    conn: Connection,
    sla: str,
    start: float,
    end: float,
    breach_start: float | None,
    source: str,
    baseline: list[Series] | None,
    now: float,
) -> int:
    """Insert or replace the recording of one incident window; return its id."""
    row = {
        "sla": sla,
        "start": math.floor(start * 1000) / 1000,  # outward to the millisecond
        "end": math.ceil(end * 1000) / 1000,
        "breach_start": breach_start,
        "source": source[:500],
        "imported_at": now,
        "baseline": encode_baseline(baseline),
    }
    stmt = upsert_insert(conn, Recording)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=["sla", "start", "end"],
            set_={
                k: stmt.excluded[k] for k in ("breach_start", "source", "imported_at", "baseline")
            },
        ),
        [row],
    )
    found = conn.execute(
        select(Recording.id).where(
            Recording.sla == sla, Recording.start == row["start"], Recording.end == row["end"]
        )
    ).scalar_one()
    return int(found)


def list_recordings(*, conn: Connection, sla: str | None = None) -> list[RecordedWindow]:
    """Return recordings (of one SLA when given), oldest window first."""
    return _windows(conn, *([Recording.sla == sla] if sla is not None else []))


def recording_at(*, conn: Connection, sla: str, at: float) -> RecordedWindow | None:
    """Return the recording of ``sla`` whose window holds ``at``; None when none does.

    Windows of one SLA may overlap (one outage's campaign recorded up to each of its
    breaches): the one whose declared breach is nearest ``at`` wins, then the newest import.
    """
    found = _windows(conn, Recording.sla == sla, Recording.start <= at, Recording.end >= at)

    def key(w: RecordedWindow) -> tuple[float, float]:
        gap = abs(w.breach_start - at) if w.breach_start is not None else math.inf
        return (gap, -w.imported_at)

    return min(found, key=key, default=None)


def recording_overlapping(
    *, conn: Connection, sla: str, start: float, end: float
) -> RecordedWindow | None:
    """Return the recording of ``sla`` that overlaps [start, end] most; None when none does."""
    best, most = None, 0.0
    for w in list_recordings(conn=conn, sla=sla):
        overlap = min(end, w.end) - max(start, w.start)
        if overlap > most:
            best, most = w, overlap
    return best


def read_baseline(*, conn: Connection, recording_id: int) -> list[Series] | None:
    """Return the baseline series stored with a recording (None when it has none)."""
    blob = conn.execute(
        select(Recording.baseline).where(Recording.id == recording_id)
    ).scalar_one_or_none()
    return decode_baseline(blob, f"baseline of recording {recording_id}")
