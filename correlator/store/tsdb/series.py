"""Repository functions for series and histogram identities."""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, select

from collector.schema import series_key
from correlator.selector import Matcher, Selector, with_name
from correlator.store.dialect import qmark_rows, sqlite_rows_per_statement, upsert_insert
from correlator.store.engine import driver_connection
from correlator.store.tables import Histogram, SeriesRow
from correlator.store.tsdb.bounds import ReadTooSlow, check_deadline

CHUNK = 500
# Series rows a selector reads at a time, then matches with no cursor open.
PAGE = 5000
DEADLINE_ROWS = 256  # rows between deadline checks besides one before every regex match
MEMO = 4096  # regex results kept per matcher, by label value
# A regex match that costs more than SLOW_COST (RE2 program size times the value's length;
# about 2 ms) waits for one of SLOW_AT_ONCE places in the process: a flood of hostile
# regexes then takes one CPU, not all of them, from ingest (benchmarks/hostile_reads.py).
SLOW_COST = 2_000_000
SLOW_AT_ONCE = 1
# Series rows go as (key, name, labels JSON, histogram_id, le), straight to the driver,
# many rows a statement: sqlite3 gives the GIL back per statement step, and a thread waits
# to get it back while another runs Python (causeline/commands/serve.py).
_SQLITE_SERIES = (
    "INSERT INTO series (key, name, labels, histogram_id, le) VALUES {} "
    "ON CONFLICT (key) DO NOTHING"
)
# One statement for all rows, in their order (ids follow it, as row by row).
_PG_SERIES = (
    "INSERT INTO series (key, name, labels, histogram_id, le) "
    "SELECT * FROM unnest(%b::varchar[], %b::varchar[], %b::text[]::json[], %b::int4[], "
    "%b::float8[]) ON CONFLICT (key) DO NOTHING"
)


@dataclass(frozen=True, slots=True)
class SeriesInfo:
    """A stored series: id, name and labels."""

    id: int
    name: str
    labels: dict[str, str]


def _parse_le(text: str) -> float | None:
    try:
        return float(text)  # "+Inf" parses to inf
    except ValueError:
        return None


def _histogram_rows(names_labels: Iterable[tuple[str, dict[str, str]]]) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for name, labels in names_labels:
        if name.endswith("_bucket") and "le" in labels:
            base = name.removesuffix("_bucket")
            rest = {k: v for k, v in labels.items() if k != "le"}
            key = series_key(base, rest)
            rows[key] = {"key": key, "name": base, "labels": rest}
    return rows


def _ids_by_key(conn: Connection, column_table, keys: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in range(0, len(keys), CHUNK):
        chunk = keys[i : i + CHUNK]
        stmt = select(column_table.key, column_table.id).where(column_table.key.in_(chunk))
        out.update(dict(conn.execute(stmt).all()))
    return out


def series_ids_by_key(*, conn: Connection, keys: list[str]) -> dict[str, int]:
    """Return key -> id of the stored series among ``keys`` (``series_key``); none created."""
    return _ids_by_key(conn, SeriesRow, keys)


def ensure_series(
    *, conn: Connection, items: dict[str, tuple[str, dict[str, str]]]
) -> dict[str, int]:
    """Create missing series (key -> (name, labels)) and return key -> id for all of them."""
    if not items:
        return {}
    hist_rows = _histogram_rows(items.values())
    hist_ids: dict[str, int] = {}
    if hist_rows:
        stmt = upsert_insert(conn, Histogram).on_conflict_do_nothing(index_elements=["key"])
        conn.execute(stmt, list(hist_rows.values()))
        hist_ids = _ids_by_key(conn, Histogram, list(hist_rows))
    return _insert_series(conn, _series_rows(items, hist_ids), list(items))


def _series_rows(items: dict[str, tuple[str, dict[str, str]]], hist_ids: dict[str, int]) -> list:
    """Return (key, name, labels JSON, histogram id, le) rows, in the items' order."""
    rows = []
    for key, (name, labels) in items.items():
        hist_id, le = None, None
        if name.endswith("_bucket") and "le" in labels:
            rest = {k: v for k, v in labels.items() if k != "le"}
            hist_id = hist_ids[series_key(name.removesuffix("_bucket"), rest)]
            le = _parse_le(labels["le"])
        # JSON text as the JSON column type writes it (json.dumps), so stored labels match.
        rows.append((key, name, json.dumps(labels), hist_id, le))
    return rows


def _insert_series(conn: Connection, rows: list, keys: list[str]) -> dict[str, int]:
    """Insert the rows skipping existing keys, in one statement; return key -> id of keys."""
    raw = driver_connection(conn)
    if conn.dialect.name == "postgresql":
        with raw.cursor() as cur:
            cur.execute(_PG_SERIES, [list(col) for col in zip(*rows, strict=True)])
            cur.execute("SELECT key, id FROM series WHERE key = ANY(%b)", (keys,))
            return dict(cur.fetchall())
    per = sqlite_rows_per_statement(raw, 5, CHUNK)
    cur = raw.cursor()
    try:
        for i in range(0, len(rows), per):
            part = rows[i : i + per]
            sql = _SQLITE_SERIES.format(qmark_rows(len(part), 5))
            cur.execute(sql, [v for row in part for v in row])
    finally:
        cur.close()
    return _ids_by_key(conn, SeriesRow, keys)


def find_series(
    *,
    conn: Connection,
    selector: Selector,
    limit: int | None = None,
    deadline: float | None = None,
) -> list[SeriesInfo]:
    """Return the series matching a selector, ordered by id, read through ``conn``.

    With ``deadline`` (a ``time.monotonic()`` value), raise ReadTooSlow once it passes.
    A reader that may run slow regexes uses ``match_series``, which holds no connection
    while they run.
    """
    match = _Matching(selector, deadline)
    out: list[SeriesInfo] = []
    after = 0
    while True:
        rows = conn.execute(_candidates(selector, after)).all()
        if match.rows(rows, out, limit) or len(rows) < PAGE:
            return out
        after = rows[-1][0]


def match_series(
    *,
    engine: Engine,
    selector: Selector,
    limit: int | None = None,
    deadline: float | None = None,
) -> list[SeriesInfo]:
    """Return the series matching a selector, ordered by id; no connection held while matching.

    Candidate rows come a page at a time on a connection given back before their label
    values meet the selector's regexes, so a slow regex holds no connection anyone waits
    for. With ``deadline`` (a ``time.monotonic()`` value), raise ReadTooSlow once it passes.
    """
    match = _Matching(selector, deadline)
    out: list[SeriesInfo] = []
    after = 0
    while True:
        check_deadline(deadline)
        with engine.connect() as conn:
            rows = conn.execute(_candidates(selector, after)).all()
        if match.rows(rows, out, limit) or len(rows) < PAGE:
            return out
        after = rows[-1][0]


def _candidates(selector: Selector, after: int):
    """Return the query for the next page of series rows past id ``after`` with the name."""
    stmt = select(SeriesRow.id, SeriesRow.name, SeriesRow.labels).where(SeriesRow.id > after)
    if selector.name is not None:
        stmt = stmt.where(SeriesRow.name == selector.name)
    return stmt.order_by(SeriesRow.id).limit(PAGE)


@functools.cache
def _slow_places() -> threading.BoundedSemaphore:
    """Return the process's places for slow regex matches (made on first use)."""
    return threading.BoundedSemaphore(SLOW_AT_ONCE)


def _slow_match(matcher: Matcher, labels: dict[str, str], deadline: float | None) -> bool:
    """Return whether a costly regex matcher holds, waiting for a place until the deadline."""
    places = _slow_places()
    wait = None if deadline is None else max(0.0, deadline - time.monotonic())
    if not places.acquire(timeout=wait):
        raise ReadTooSlow()
    try:
        check_deadline(deadline)
        return matcher.matches(labels)
    finally:
        places.release()


class _Matching:
    """A selector's label matchers applied to rows, cheapest first, within a deadline.

    Each regex result is kept per label value (up to MEMO values), so a value shared by
    many series is matched once; the deadline is checked before every regex match (one
    can take a second on a long value) and every DEADLINE_ROWS rows.
    """

    def __init__(self, selector: Selector, deadline: float | None):
        self.matchers = selector.cheapest_first()
        self.reads_name = selector.reads_name
        self.deadline = deadline
        self.memo: list[dict[str, bool]] = [{} for _ in self.matchers]

    def rows(self, rows, out: list[SeriesInfo], limit: int | None) -> bool:
        """Append the rows that match to ``out``; return whether ``limit`` is reached."""
        for i, (sid, name, labels) in enumerate(rows):
            if i % DEADLINE_ROWS == 0:
                check_deadline(self.deadline)
            if self.labels(with_name(name, labels) if self.reads_name else labels):
                out.append(SeriesInfo(sid, name, labels))
                if limit is not None and len(out) >= limit:
                    return True
        return False

    def labels(self, labels: dict[str, str]) -> bool:
        """Return whether every matcher holds for the labels."""
        for matcher, memo in zip(self.matchers, self.memo, strict=True):
            if matcher.pattern is None:
                if not matcher.matches(labels):
                    return False
                continue
            value = labels.get(matcher.label, "")
            known = memo.get(value)
            if known is None:
                check_deadline(self.deadline)
                if matcher.pattern.programsize * len(value) > SLOW_COST:
                    known = _slow_match(matcher, labels, self.deadline)
                else:
                    known = matcher.matches(labels)
                if len(memo) < MEMO:
                    memo[value] = known
            if not known:
                return False
        return True


def series_by_ids(*, conn: Connection, ids: list[int]) -> dict[int, SeriesInfo]:
    """Return the series with the given ids."""
    out: dict[int, SeriesInfo] = {}
    for i in range(0, len(ids), CHUNK):
        stmt = select(SeriesRow.id, SeriesRow.name, SeriesRow.labels).where(
            SeriesRow.id.in_(ids[i : i + CHUNK])
        )
        out.update({sid: SeriesInfo(sid, n, lab) for sid, n, lab in conn.execute(stmt)})
    return out
