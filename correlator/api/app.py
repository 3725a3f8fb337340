"""The causeline service: ``create_app(settings)`` builds a FastAPI app and its engine."""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi_offline import FastAPIOffline
from prometheus_client import CollectorRegistry

from correlator.alerts.worker import OutboxWorker
from correlator.api.auth import TokenChecker
from correlator.api.body_guard import BodyGuard
from correlator.api.caching import add_transfer_middleware
from correlator.api.hosts import HostCheck, allowed_hosts
from correlator.api.read_lane import ReadLane, lane_size, lanes_from_settings
from correlator.api.routes import (
    alertmanager_hook,
    alerts,
    capacity,
    catalog,
    changes,
    chat_actions,
    fingerprints,
    health,
    hooks,
    incidents,
    ingest,
    labels,
    models,
    oncall,
    otlp,
    promql,
    remote_write,
    series,
    slas,
    whoami,
)
from correlator.api.schemas.ingest import BatchIn
from correlator.incidents.autoscale import BacklogCollector
from correlator.incidents.evaluator import PassStats, holder_name, run_evaluator
from correlator.incidents.pass_metrics import PassCollector
from correlator.promsource import source_from_settings
from correlator.settings import ServiceSettings, resolve_database_url
from correlator.store.engine import make_engine, make_read_engine
from correlator.store.tsdb import SeriesCache, periodic, run_retention_job

if TYPE_CHECKING:
    from sqlalchemy import Engine


ROUTERS = [
    health.router,
    ingest.router,
    series.router,
    labels.router,
    catalog.router,
    fingerprints.router,
    changes.router,
    hooks.router,
    models.router,
    slas.router,
    incidents.router,
    chat_actions.router,
    oncall.router,
    capacity.router,
    alerts.router,
    alertmanager_hook.router,
    whoami.router,
    # Prometheus remote write and OTLP/HTTP metrics in (issue 17).
    remote_write.router,
    otlp.router,
    # PromQL read API (/api/v1/query, POST /api/v1/query_range) over the store (issue 17).
    promql.router,
]


def _openapi(app: FastAPI):
    def build() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            defs = BatchIn.model_json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(defs.pop("$defs", {}))
            app.openapi_schema = schema
        return app.openapi_schema

    return build


def create_app(
    settings: ServiceSettings | None = None,
    *,
    engine: Engine | None = None,
    source=None,
    read_engine=None,
) -> FastAPI:
    """Return the service app; the engines and metric source come from the settings unless given.

    Reads admitted to the read lane use ``read_engine``: by default an engine of their own
    on the same database, one connection per read the lane runs at once.
    """
    settings = settings or ServiceSettings()
    if engine is None:
        engine = make_engine(resolve_database_url(settings.database_url))
    if read_engine is None:
        read_engine = make_read_engine(
            engine, connections=lane_size(settings), timeout=settings.read_timeout_seconds
        )
    lanes = lanes_from_settings(settings, engine=engine, read_engine=read_engine)
    # Built once (None without prometheus_url: the store only) and handed to the evaluator,
    # the outbox worker and the routes; nothing below reads the environment for it.
    source = source if source is not None else source_from_settings(settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        task = None
        if settings.evaluator_enabled:
            task = asyncio.create_task(
                run_evaluator(
                    engine,
                    interval=settings.evaluator_interval_seconds,
                    lease_seconds=settings.lease_seconds,
                    holder=_app.state.evaluator_holder,
                    settings=settings,
                    source=source,
                    stats=_app.state.evaluator_stats,
                )
            )
        alert_worker = alert_task = None
        if settings.alert_worker_enabled:
            alert_worker = OutboxWorker(
                engine, settings, holder=_app.state.evaluator_holder, source=source
            )
            alert_task = asyncio.create_task(
                alert_worker.run(settings.alert_worker_interval_seconds)
            )
        retention_task = None
        if settings.retention_enabled or periodic(settings):
            retention_task = asyncio.create_task(
                run_retention_job(engine, settings=settings, holder=_app.state.evaluator_holder)
            )
        yield
        for running in (task, alert_task, retention_task):
            if running is not None:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
        if alert_worker is not None:
            alert_worker.close()
        if source is not None:
            source.close()
        engine.dispose()
        read_engine.dispose()

    # Swagger UI and ReDoc from files shipped in fastapi-offline: /docs works with no internet.
    app = FastAPIOffline(
        title="causeline",
        version="0.1.0",
        description="Ingest, query and correlate ML serving signals on one timeline.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.read_engine = read_engine
    app.state.read_lanes = lanes
    app.state.metric_source = source
    app.state.series_cache = SeriesCache()
    app.state.tokens = TokenChecker(engine)
    app.state.evaluator_holder = holder_name()
    registry = CollectorRegistry()
    registry.register(
        BacklogCollector(
            engine,
            window=settings.autoscale_window_seconds,
            drain=settings.autoscale_drain_seconds,
            min_replicas=settings.autoscale_min_replicas,
        )
    )
    app.state.evaluator_stats = PassStats()
    registry.register(PassCollector(app.state.evaluator_stats))
    app.state.metrics_registry = registry
    for router in ROUTERS:
        app.include_router(router)
    # Ingest and remote write read (and inflate) their own bodies within the same limits.
    app.add_middleware(
        BodyGuard,
        max_bytes=settings.max_body_bytes,
        skip=frozenset({"/api/v1/ingest", "/api/v1/write"}),
    )
    # Reads take a place in their family's lane before anything else of theirs runs.
    app.add_middleware(ReadLane, lanes=lanes)
    hosts = allowed_hosts(
        bind_host=settings.bind_host, extra=settings.allowed_hosts, public_url=settings.public_url
    )
    # Responses only: ingest still reads (and gunzips) its own compressed request bodies.
    add_transfer_middleware(app)
    app.add_middleware(HostCheck, allowed=hosts)
    app.openapi = _openapi(app)  # type: ignore[method-assign]  # FastAPI's documented hook
    return app
