"""Shared fixtures: the same test bodies run on a SQLite file and on real PostgreSQL."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

PG_URL = os.environ.get(
    "CAUSELINE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
SCENARIOS = Path(__file__).resolve().parents[1].parent / "shared" / "scenarios"
_pg_state: dict = {}
# Starlette's TestClient sends "Host: testserver"; the service answers only names it knows.
os.environ.setdefault("CAUSELINE_ALLOWED_HOSTS", "testserver")


def scenarios_dir() -> Path:
    """Return the shared scenarios folder (beside the checkout)."""
    return Path(os.environ.get("CAUSELINE_SCENARIOS", SCENARIOS))


def _pg_available() -> str | None:
    if "error" not in _pg_state:
        import psycopg

        try:
            with psycopg.connect(PG_URL.replace("+psycopg", ""), connect_timeout=3):
                _pg_state["error"] = None
        except psycopg.Error as exc:
            _pg_state["error"] = f"PostgreSQL at {PG_URL} is not reachable: {exc}"
    return _pg_state["error"]


def require_postgres() -> None:
    """Skip without PostgreSQL on a laptop; fail in CI, where it must run."""
    error = _pg_available()
    if error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{error} (CI=true: PostgreSQL tests must not skip)")
        pytest.skip(error)


def _create_pg_database() -> tuple[str, str]:
    import psycopg
    from sqlalchemy.engine import make_url

    name = f"causeline_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    return name, url


def _drop_pg_database(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_URL.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    """Yield the URL of an empty database: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'causeline.db'}"
        return
    require_postgres()
    name, url = _create_pg_database()
    try:
        yield url
    finally:
        _drop_pg_database(name)


@pytest.fixture
def engine(db_url):
    """Yield an engine on a schema built through the migrations."""
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade

    eng = make_engine(db_url)
    upgrade(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def client(engine):
    """Yield a service client whose requests carry a writer token named 'ci'."""
    from fastapi.testclient import TestClient

    from correlator.api.app import create_app
    from correlator.settings import ServiceSettings
    from correlator.store.engine import write_transaction
    from correlator.store.tokens import create_token

    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="ci")
    app = create_app(ServiceSettings(database_url=str(engine.url)), engine=engine)
    with TestClient(app) as c:
        c.headers["Authorization"] = f"Bearer {token}"
        yield c


@pytest.fixture
def anon(client):
    """Yield a client without a token on the same app."""
    from fastapi.testclient import TestClient

    with TestClient(client.app) as c:
        yield c
