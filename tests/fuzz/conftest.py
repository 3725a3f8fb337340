"""One migrated SQLite store per fuzz module, the service over it, and an admin token."""

from __future__ import annotations

import pytest

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.tokens import create_token


@pytest.fixture(scope="module")
def fuzz_engine(tmp_path_factory):
    """Yield an engine on a fresh SQLite file built through the migrations, one per module."""
    path = tmp_path_factory.mktemp("fuzz") / "causeline.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    yield engine
    engine.dispose()


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
