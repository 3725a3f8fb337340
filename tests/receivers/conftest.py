"""A service whose ingest token the push tests send, with limits small enough to reach."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token


@pytest.fixture
def client(engine):
    """Yield a client with an ingest token, limits small enough to reach."""
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="pusher")
    settings = ServiceSettings(
        database_url=str(engine.url), max_body_bytes=50_000, max_series_per_batch=20
    )
    with TestClient(create_app(settings, engine=engine)) as c:
        c.headers["Authorization"] = f"Bearer {token}"
        c.engine = engine
        yield c
