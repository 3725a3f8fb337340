"""Dialect-specific statement builders shared by the repository modules."""

from __future__ import annotations

from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql, sqlite


def upsert_insert(conn: Connection, table):
    """Return an INSERT for the connection's dialect that supports ON CONFLICT clauses."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)
