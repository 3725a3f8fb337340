"""Engines and sessions for the embedded SQLite file or PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker


def default_database_path() -> Path:
    """Return the embedded SQLite file: $CAUSELINE_HOME or the XDG data folder."""
    home = os.environ.get("CAUSELINE_HOME")
    if home:
        return Path(home) / "causeline.db"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "causeline" / "causeline.db"


def resolve_database_url(url: str | None = None) -> str:
    """Return the URL to use: the argument, $CAUSELINE_DATABASE_URL, else the SQLite file."""
    url = url or os.environ.get("CAUSELINE_DATABASE_URL")
    if url:
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
        return url
    path = default_database_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA cache_size=-32768")  # 32 MiB: keeps the hot hour of samples cached
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str | None = None) -> Engine:
    """Create an engine; SQLite gets WAL, a busy timeout and explicit transactions."""
    url = resolve_database_url(url)
    if url.startswith("sqlite"):
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)

        # Let SQLAlchemy, not pysqlite, begin transactions, so BEGIN IMMEDIATE works.
        @event.listens_for(engine, "connect")
        def _no_autobegin(dbapi_connection, _record):
            dbapi_connection.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin(conn):
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.info.get("write") else "BEGIN")

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Return a session factory bound to the engine."""
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """Yield a connection in a write transaction (SQLite: BEGIN IMMEDIATE)."""
    with engine.connect() as conn:
        conn.info["write"] = True
        try:
            with conn.begin():
                yield conn
        finally:
            conn.info["write"] = False
