"""Bearer-token checks for writers (always, by scope) and readers (when configured)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from correlator.store.tokens import TokenInfo, token_info

if TYPE_CHECKING:
    from sqlalchemy import Engine


class TokenChecker:
    """Check bearer tokens against the store on every request, so a revoke holds at once."""

    def __init__(self, engine: Engine):
        self._engine = engine

    def _lookup(self, secret: str) -> TokenInfo | None:
        with self._engine.connect() as conn:
            return token_info(conn=conn, secret=secret)

    async def info_of(self, request: Request) -> TokenInfo:
        """Return the token's name and scope or raise 401."""
        header = request.headers.get("authorization", "")
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise HTTPException(
                401,
                "missing bearer token: send 'Authorization: Bearer <token>' "
                "(create one with `causeline token create NAME`)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        # One indexed lookup by hash: no cache, so no process honours a revoked token.
        info = await run_in_threadpool(self._lookup, secret.strip())
        if info is None:
            raise HTTPException(
                401, "invalid or revoked token", headers={"WWW-Authenticate": "Bearer"}
            )
        return info

    async def name_of(self, request: Request) -> str:
        """Return the token's name or raise 401."""
        return (await self.info_of(request)).name


def require_scope(scope: str):
    """Return a dependency that yields the token's name; 401 without one, 403 below ``scope``."""

    async def check(request: Request) -> str:
        info = await request.app.state.tokens.info_of(request)
        if not info.allows(scope):
            raise HTTPException(
                403,
                f"token {info.name!r} has scope {info.scope!r}; "
                f"{request.method} {request.url.path} needs scope {scope!r} "
                f"(create one with `causeline token create NAME --scope {scope}`)",
            )
        return info.name

    check.__name__ = f"require_{scope}"
    return check


require_ingest = require_scope("ingest")
require_writer = require_scope("write")
require_admin = require_scope("admin")


async def require_reader(request: Request) -> str | None:
    """Return the reading token's name when reads need one, else None."""
    if not request.app.state.settings.reads_need_token():
        return None
    return await request.app.state.tokens.name_of(request)


IngestDep = Annotated[str, Depends(require_ingest)]
WriterDep = Annotated[str, Depends(require_writer)]
AdminDep = Annotated[str, Depends(require_admin)]
ReaderDep = Annotated[str | None, Depends(require_reader)]
