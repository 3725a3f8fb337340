"""Bearer-token checks for writers (always) and readers (when configured)."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from correlator.store.tokens import token_name


class TokenChecker:
    """Check bearer tokens against the store, remembering good ones for a short while."""

    def __init__(self, engine, ttl: float):
        self._engine = engine
        self._ttl = ttl
        self._good: dict[str, tuple[str, float]] = {}

    def _lookup(self, secret: str) -> str | None:
        with self._engine.connect() as conn:
            return token_name(conn=conn, secret=secret)

    async def name_of(self, request: Request) -> str:
        """Return the token's name or raise 401."""
        header = request.headers.get("authorization", "")
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise HTTPException(
                401,
                "missing bearer token: send 'Authorization: Bearer <token>' "
                "(create one with `causeline token create NAME`)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        secret = secret.strip()
        hit = self._good.get(secret)
        now = time.monotonic()
        if hit and hit[1] > now:
            return hit[0]
        name = await run_in_threadpool(self._lookup, secret)
        if name is None:
            raise HTTPException(
                401, "invalid or revoked token", headers={"WWW-Authenticate": "Bearer"}
            )
        if len(self._good) > 10_000:
            self._good.clear()
        self._good[secret] = (name, now + self._ttl)
        return name


async def require_writer(request: Request) -> str:
    """Return the writing token's name; 401 without a valid token."""
    return await request.app.state.tokens.name_of(request)


async def require_reader(request: Request) -> str | None:
    """Return the reading token's name when reads need one, else None."""
    if not request.app.state.settings.reads_need_token():
        return None
    return await request.app.state.tokens.name_of(request)


WriterDep = Annotated[str, Depends(require_writer)]
ReaderDep = Annotated[str | None, Depends(require_reader)]
