"""Shared pieces of the route handlers: the write-body base model, field errors, store calls."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

from fastapi import HTTPException, Path, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from correlator.limits import MAX_NAME, NAME_PATTERN
from correlator.store.engine import write_transaction

if TYPE_CHECKING:
    from sqlalchemy import Engine


Name = Annotated[str, Path(min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)]
QueryName = Annotated[str, Query(min_length=1, max_length=MAX_NAME, pattern=r"^[^\x00]+$")]
Author = Annotated[str | None, Field(default=None, max_length=MAX_NAME, description="who did it")]


class Body(BaseModel):
    """A write body: unknown fields are refused (its text was checked at the edge, BodyGuard)."""

    model_config = ConfigDict(extra="forbid")


def field_error(field: str, msg: str, status: int = 422) -> HTTPException:
    """Return a 422 in FastAPI's shape that names the field."""
    return HTTPException(
        status, [{"loc": ["body", field], "field": field, "msg": msg, "type": "value_error"}]
    )


def fit(field: str, value: str | None, most: int, why: str, where: str = "body") -> None:
    """Raise a 422 naming ``field`` when ``value`` is longer than the ``most`` its column holds."""
    if value and len(value) > most:
        msg = f"at most {most} characters ({why}); got {len(value)}"
        detail = {"loc": [where, field], "field": field, "msg": msg, "type": "value_error"}
        raise HTTPException(422, [detail])


def not_found(what: str) -> HTTPException:
    """Return a 404 naming what is missing."""
    return HTTPException(404, f"no {what}")


def who(body_author: str | None, token_name: str | None) -> str:
    """Return the author to record: the body's, else the token's name."""
    return body_author or token_name or ""


async def read(engine: Engine, fn, **kwargs):
    """Run a repository function on a read connection in the thread pool."""

    def call():
        with engine.connect() as conn:
            return fn(conn=conn, **kwargs)

    return await run_in_threadpool(call)


async def write(engine: Engine, fn, **kwargs):
    """Run a repository function in a write transaction in the thread pool."""

    def call():
        with write_transaction(engine) as conn:
            return fn(conn=conn, **kwargs)

    return await run_in_threadpool(call)


def now() -> float:
    """Return the current unix time."""
    return time.time()
