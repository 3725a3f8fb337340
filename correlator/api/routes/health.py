"""Liveness and readiness probes."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from correlator.api.deps import EngineDep
from correlator.api.schemas.service import HealthOut, ReadyOut
from correlator.store.migrate import current_revision

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthOut, response_model_exclude_unset=True)
async def healthz() -> dict:
    """Return 200 while the process serves requests."""
    return {"status": "ok"}


@router.get("/readyz", response_model=ReadyOut, response_model_exclude_unset=True)
async def readyz(engine: EngineDep) -> dict:
    """Return 200 when the database answers and has a schema, else 503."""

    def check() -> str | None:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return current_revision(engine)

    try:
        revision = await run_in_threadpool(check)
    except Exception as exc:  # noqa: BLE001 - any database failure means not ready
        raise HTTPException(503, f"database unavailable: {exc.__class__.__name__}") from exc
    if revision is None:
        raise HTTPException(503, "database has no schema: run `causeline db upgrade`")
    return {"status": "ok", "revision": revision}
