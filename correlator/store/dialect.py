"""Dialect-specific statement builders shared by the repository modules."""

from __future__ import annotations

import sqlite3
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
