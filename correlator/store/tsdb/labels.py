"""Repository functions for the label catalog: metric names, label names and label values."""

from __future__ import annotations

from sqlalchemy import Connection, bindparam, func, select, text

from correlator.store.tables import SeriesRow

# One statement per dialect: SQLite walks the JSON with json_each, PostgreSQL with its
# json operators. Both read only the series table (one row per series, never samples).
_LABEL_NAMES = {
    "sqlite": "SELECT DISTINCT j.key FROM series, json_each(series.labels) AS j "
    "ORDER BY 1 LIMIT :limit",
    "postgresql": "SELECT DISTINCT k FROM series, json_object_keys(series.labels) AS k "
    "ORDER BY 1 LIMIT :limit",
}
_LABEL_VALUES = {
    "sqlite": "SELECT DISTINCT j.value FROM series, json_each(series.labels) AS j "
    "WHERE j.key = :name ORDER BY 1 LIMIT :limit",
    "postgresql": "SELECT DISTINCT series.labels ->> :name AS v FROM series "
    "WHERE series.labels ->> :name IS NOT NULL ORDER BY 1 LIMIT :limit",
}
_KEYS_OF_METRICS = {
    "sqlite": "SELECT series.name, j.key FROM series, json_each(series.labels) AS j "
    "WHERE series.name IN :names GROUP BY series.name, j.key",
    "postgresql": "SELECT series.name, k FROM series, json_object_keys(series.labels) AS k "
    "WHERE series.name IN :names GROUP BY series.name, k",
}


def _dialect(conn: Connection) -> str:
    return "postgresql" if conn.dialect.name == "postgresql" else "sqlite"


def metric_names(
    *, conn: Connection, limit: int, contains: str | None = None
) -> list[tuple[str, int]]:
    """Return up to ``limit`` metric names (holding ``contains``), with their series counts."""
    stmt = select(SeriesRow.name, func.count()).group_by(SeriesRow.name).order_by(SeriesRow.name)
    if contains:
        stmt = stmt.where(SeriesRow.name.contains(contains, autoescape=True))
    stmt = stmt.limit(limit)
    return [(name, int(count)) for name, count in conn.execute(stmt)]


def label_names(*, conn: Connection, limit: int) -> list[str]:
    """Return up to ``limit`` label names used by any series, sorted."""
    rows = conn.execute(text(_LABEL_NAMES[_dialect(conn)]), {"limit": limit})
    return [str(key) for (key,) in rows]


def label_values(*, conn: Connection, name: str, limit: int) -> list[str]:
    """Return up to ``limit`` values of one label across all series, sorted."""
    rows = conn.execute(text(_LABEL_VALUES[_dialect(conn)]), {"name": name, "limit": limit})
    return [str(value) for (value,) in rows if value is not None]


def label_keys_of(*, conn: Connection, names: list[str]) -> dict[str, list[str]]:
    """Return the label names each of the given metrics uses, sorted."""
    if not names:
        return {}
    stmt = text(_KEYS_OF_METRICS[_dialect(conn)]).bindparams(bindparam("names", expanding=True))
    out: dict[str, set[str]] = {}
    for i in range(0, len(names), 500):
        for name, key in conn.execute(stmt, {"names": names[i : i + 500]}):
            out.setdefault(name, set()).add(str(key))
    return {name: sorted(keys) for name, keys in out.items()}
