"""Who a bearer token is: lets the dashboard check a person's token before it reads for them."""

from __future__ import annotations

from fastapi import APIRouter, Request

from correlator.api.deps import TokensDep
from correlator.api.schemas.service import WhoAmIOut

router = APIRouter(tags=["tokens"])


@router.get("/api/v1/whoami", response_model=WhoAmIOut, response_model_exclude_unset=True)
async def whoami(request: Request, tokens: TokensDep) -> dict:
    """Return the name of the request's token; 401 when it is missing, invalid or revoked."""
    return {"name": await tokens.name_of(request)}
