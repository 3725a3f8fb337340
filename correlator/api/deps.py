"""FastAPI dependency aliases for what the app holds: engine, settings, source, caches."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from prometheus_client import CollectorRegistry
from sqlalchemy import Engine

from correlator.api.auth import TokenChecker
from correlator.api.read_lane import admitted
from correlator.promsource import PrometheusSource
from correlator.settings import ServiceSettings
from correlator.store.tsdb import SeriesCache


def get_engine(request: Request) -> Engine:
    """Return the app's database engine; a read admitted to the read lane gets its read engine."""
    lanes = admitted()
    return lanes.read_engine if lanes is not None else request.app.state.engine


def get_settings(request: Request) -> ServiceSettings:
    """Return the app's settings."""
    return request.app.state.settings


def get_source(request: Request) -> PrometheusSource | None:
    """Return the app's metric source for metrics kept outside the store (None: store only)."""
    return request.app.state.metric_source


def get_series_cache(request: Request) -> SeriesCache:
    """Return the app's cache of series ids, shared by every ingest route."""
    return request.app.state.series_cache


def get_tokens(request: Request) -> TokenChecker:
    """Return the app's bearer-token checker."""
    return request.app.state.tokens


def get_registry(request: Request) -> CollectorRegistry:
    """Return the registry of the service's own Prometheus metrics."""
    return request.app.state.metrics_registry


def get_holder(request: Request) -> str:
    """Return the name this process holds the evaluator's lease by."""
    return request.app.state.evaluator_holder


EngineDep = Annotated[Engine, Depends(get_engine)]
SettingsDep = Annotated[ServiceSettings, Depends(get_settings)]
SourceDep = Annotated[PrometheusSource | None, Depends(get_source)]
SeriesCacheDep = Annotated[SeriesCache, Depends(get_series_cache)]
TokensDep = Annotated[TokenChecker, Depends(get_tokens)]
RegistryDep = Annotated[CollectorRegistry, Depends(get_registry)]
HolderDep = Annotated[str, Depends(get_holder)]
