"""Dialect-specific statement builders shared by the repository modules."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from functools import lru_cache

from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql, sqlite


def upsert_insert(conn: Connection, table):
    """Return an INSERT for the connection's dialect that supports ON CONFLICT clauses."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def sqlite_rows_per_statement(raw, width: int, most: int) -> int:
    """Return how many rows of ``width`` parameters one statement binds on this build, <= most."""
    return max(1, min(most, raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))


@lru_cache(maxsize=128)
def qmark_rows(rows: int, width: int) -> str:
    """Return a VALUES list of ``rows`` rows of ``width`` qmark parameters: (?,?),(?,?)."""
    return ",".join(["(" + ",".join("?" * width) + ")"] * rows)


def hours_where(hours: Sequence[int], series: tuple[int, int | None] = (0, None)) -> str:
    """Return the condition of rows of these hours and series ids [first, stop) (None: no end).

    For tables keyed by hour and series (``samples``, ``sample_runs``); ints written inline.
    """
    first, stop = series
    where = f"hour IN ({','.join(str(int(h)) for h in hours)}) AND series_id >= {int(first)}"
    return where if stop is None else f"{where} AND series_id < {int(stop)}"


def hours_between(conn: Connection, table: str, first: int, last: int) -> list[int]:
    """Return the hours in [first, last] that rows of an hour-keyed table lie in: a seek each."""
    hours: list[int] = []
    hour = conn.exec_driver_sql(
        f"SELECT MIN(hour) FROM {table} WHERE hour >= {int(first)} AND hour <= {int(last)}"
    ).scalar()
    while hour is not None:
        hours.append(hour)
        hour = conn.exec_driver_sql(
            f"SELECT MIN(hour) FROM {table} WHERE hour > {int(hour)} AND hour <= {int(last)}"
        ).scalar()
    return hours
