"""One migrated store per fuzz module and engine, the service over it, and an admin token."""

from __future__ import annotations

import pytest

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.tokens import create_token
from tests.conftest import _create_pg_database, _drop_pg_database, require_postgres


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def fuzz_engine(request, tmp_path_factory):
    """Yield an engine on a fresh store built through the migrations: SQLite, then PostgreSQL."""
    name = None
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'causeline.db'}"
    else:
        require_postgres()
        name, url = _create_pg_database()
    engine = make_engine(url)
    try:
        upgrade(engine)
        yield engine
    finally:
        engine.dispose()
        if name:
            _drop_pg_database(name)


@pytest.fixture(scope="module")
def fuzz_token(fuzz_engine) -> str:
    """Return an admin token's secret: every scope, so no handler hides behind a 401 or 403."""
    with write_transaction(fuzz_engine) as conn:
        return create_token(conn=conn, name="fuzz", scope="admin")


@pytest.fixture(scope="module")
def fuzz_app(fuzz_engine):
    """Return the service over the module's store, with no background jobs running."""
    settings = ServiceSettings(
        database_url=str(fuzz_engine.url),
        allowed_hosts="testserver",  # the Host the schemathesis ASGI client sends
        evaluator_enabled=False,
        alert_worker_enabled=False,
        retention_enabled=False,
        rollup_enabled=False,
        compaction_enabled=False,
    )
    return create_app(settings, engine=fuzz_engine)
