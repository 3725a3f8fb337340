"""FastAPI dependency aliases for the app's engine, settings and metric source."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import Engine

from correlator.api.read_lane import admitted
from correlator.promsource import PrometheusSource
from correlator.settings import ServiceSettings


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


EngineDep = Annotated[Engine, Depends(get_engine)]
SettingsDep = Annotated[ServiceSettings, Depends(get_settings)]
SourceDep = Annotated[PrometheusSource | None, Depends(get_source)]
