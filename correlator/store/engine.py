"""Engines and sessions for the embedded SQLite file or PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Connection, Engine, create_engine, event, make_url
from sqlalchemy.orm import Session, sessionmaker


def with_driver(url: str) -> str:
    """Return the URL with psycopg named for a plain ``postgresql://`` or ``postgres://`` one.

    ``postgres://`` is libpq's other spelling (Heroku's, many platforms'); SQLAlchemy knows
    only ``postgresql``.
    """
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url.removeprefix(plain)
    return url


# A new SQLite file gets 16 KiB pages: its keyed sample inserts cost less CPU, so ingest
# ran 20-40% faster than at SQLite's 4 KiB (benchmarks/ingest.py). An existing file keeps
# its page size (docs/operators.md says how to convert one).
SQLITE_PAGE_SIZE = 16384


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA page_size={SQLITE_PAGE_SIZE}")  # only before the first table
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA cache_size=-32768")  # 32 MiB: keeps the hot hour of samples cached
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(
    url: str,
    *,
    pool_size: int | None = None,
    max_overflow: int | None = None,
    pool_timeout: float | None = None,
) -> Engine:
    """Create an engine; SQLite gets WAL, a busy timeout and explicit transactions.

    The URL comes from the caller (``correlator.settings.resolve_database_url`` finds the
    configured one); nothing here reads the environment. The pool keeps SQLAlchemy's sizes
    for SQLite and 10 (plus 10 overflow) for PostgreSQL unless given.
    """
    url = with_driver(url)
    pool: dict[str, Any] = {
        name: value
        for name, value in (
            ("pool_size", pool_size),
            ("max_overflow", max_overflow),
            ("pool_timeout", pool_timeout),
        )
        if value is not None
    }
    if url.startswith("sqlite"):
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        if _in_memory(make_url(url)):
            pool = {}  # one connection holds the whole database: no pool to size
        connect_args = {"check_same_thread": False, "timeout": 30}
        engine = create_engine(url, connect_args=connect_args, **pool)
        event.listen(engine, "connect", _sqlite_pragmas)

        # Let SQLAlchemy, not pysqlite, begin transactions, so BEGIN IMMEDIATE works.
        @event.listens_for(engine, "connect")
        def _no_autobegin(dbapi_connection, _record):
            dbapi_connection.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection):
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.info.get("write") else "BEGIN")

        return engine
    pool = {"pool_size": 10, "max_overflow": 10, **pool}
    return create_engine(url, pool_pre_ping=True, **pool)


def _in_memory(url: URL) -> bool:
    """Return whether a SQLite URL names an in-memory database (one per connection)."""
    return url.database in (None, "", ":memory:") or "mode=memory" in str(url)


def make_read_engine(engine: Engine, *, connections: int, timeout: float) -> Engine:
    """Return an engine on ``engine``'s database with a pool of its own, for reads.

    Reads take their connections from it, never from the pool ingest and the other writers
    use; it holds ``connections``, waited for at most ``timeout`` seconds. An in-memory
    SQLite database lives in its engine's connections, so it is read through ``engine``.
    """
    if engine.url.get_backend_name() == "sqlite" and _in_memory(engine.url):
        return engine
    url = engine.url.render_as_string(hide_password=False)
    return make_engine(url, pool_size=connections, max_overflow=0, pool_timeout=timeout)


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


def driver_connection(conn: Connection) -> Any:
    """Return the DB-API connection under a checked-out connection (for COPY and bulk SQL)."""
    driver = conn.connection.driver_connection
    assert driver is not None  # a checked-out connection always has one
    return driver
