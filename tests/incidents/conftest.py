"""Fixtures of the incident-handling tests: a service client with a writer token."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token


@pytest.fixture
def client(engine):
    """Yield a client whose requests carry a writer token named 'ci'."""
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="ci")
    app = create_app(ServiceSettings(database_url=str(engine.url)), engine=engine)
    with TestClient(app) as c:
        c.headers["Authorization"] = f"Bearer {token}"
        yield c


@pytest.fixture
def anon(client):
    """Yield a client without a token on the same app."""
    with TestClient(client.app) as c:
        yield c


def field_of(resp) -> set[str]:
    """Return the fields a 422 names."""
    return {str(d["loc"][-1]) for d in resp.json()["detail"]} | {
        str(d.get("field")) for d in resp.json()["detail"] if d.get("field")
    }
