"""FastAPI dependency aliases for the app's engine and settings."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import Engine

from correlator.settings import ServiceSettings


def get_engine(request: Request) -> Engine:
    """Return the app's database engine."""
    return request.app.state.engine


def get_settings(request: Request) -> ServiceSettings:
    """Return the app's settings."""
    return request.app.state.settings


EngineDep = Annotated[Engine, Depends(get_engine)]
SettingsDep = Annotated[ServiceSettings, Depends(get_settings)]
