"""Repository functions for series and histogram identities."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, select

from collector.schema import series_key
from correlator.selector import Selector
from correlator.store.bounds import check_deadline
from correlator.store.dialect import upsert_insert
from correlator.store.tables import Histogram, Series

CHUNK = 500


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
    rows = []
    for key, (name, labels) in items.items():
        row = {"key": key, "name": name, "labels": labels, "histogram_id": None, "le": None}
        if name.endswith("_bucket") and "le" in labels:
            rest = {k: v for k, v in labels.items() if k != "le"}
            row["histogram_id"] = hist_ids[series_key(name.removesuffix("_bucket"), rest)]
            row["le"] = _parse_le(labels["le"])
        rows.append(row)
    stmt = upsert_insert(conn, Series).on_conflict_do_nothing(index_elements=["key"])
    for i in range(0, len(rows), CHUNK):
        conn.execute(stmt, rows[i : i + CHUNK])
    return _ids_by_key(conn, Series, list(items))


def find_series(
    *,
    conn: Connection,
    selector: Selector,
    limit: int | None = None,
    deadline: float | None = None,
) -> list[SeriesInfo]:
    """Return the series matching a selector, ordered by id.

    With ``deadline`` (a ``time.monotonic()`` value), raise ReadTooSlow once it passes.
    """
    stmt = select(Series.id, Series.name, Series.labels).order_by(Series.id)
    if selector.name is not None:
        stmt = stmt.where(Series.name == selector.name)
    out = []
    for sid, name, labels in conn.execute(stmt):
        check_deadline(deadline)
        if selector.matches(name, labels):
            out.append(SeriesInfo(sid, name, labels))
            if limit is not None and len(out) >= limit:
                break
    return out


def series_by_ids(*, conn: Connection, ids: list[int]) -> dict[int, SeriesInfo]:
    """Return the series with the given ids."""
    out: dict[int, SeriesInfo] = {}
    for i in range(0, len(ids), CHUNK):
        stmt = select(Series.id, Series.name, Series.labels).where(
            Series.id.in_(ids[i : i + CHUNK])
        )
        out.update({sid: SeriesInfo(sid, n, lab) for sid, n, lab in conn.execute(stmt)})
    return out
