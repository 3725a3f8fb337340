"""The causeline service: ``create_app(settings)`` builds a FastAPI app and its engine."""

from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from correlator.api.auth import TokenChecker
from correlator.api.routes import catalog, fingerprints, health, ingest, series
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine
from correlator.store.ingest import SeriesCache

ROUTERS = [health.router, ingest.router, series.router, catalog.router, fingerprints.router]


def _openapi(app: FastAPI):
    def build() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            defs = ingest.BatchIn.model_json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(defs.pop("$defs", {}))
            app.openapi_schema = schema
        return app.openapi_schema

    return build


def create_app(settings: ServiceSettings | None = None, *, engine=None) -> FastAPI:
    """Return the service app; the engine is made from the settings unless given."""
    settings = settings or ServiceSettings()
    engine = engine if engine is not None else make_engine(settings.database_url)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        engine.dispose()

    app = FastAPI(
        title="causeline",
        version="0.1.0",
        description="Ingest, query and correlate ML serving signals on one timeline.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.series_cache = SeriesCache()
    app.state.tokens = TokenChecker(engine, settings.token_cache_seconds)
    for router in ROUTERS:
        app.include_router(router)
    app.openapi = _openapi(app)
    return app
