"""Webhooks for outside systems: a deploy pipeline reports a rollout step."""

from __future__ import annotations

import hashlib

from fastapi import APIRouter

from correlator.api.auth import WriterDep
from correlator.api.deps import EngineDep
from correlator.api.handlers import fit, now, who, write
from correlator.api.schemas.changes import ChangeOut
from correlator.api.schemas.hooks import DeployHook
from correlator.limits import MAX_NAME
from correlator.store.changes import upsert_hook_change

router = APIRouter(tags=["hooks"])


@router.post(
    "/api/v1/hooks/deploy",
    status_code=201,
    response_model=ChangeOut,
    response_model_exclude_unset=True,
)
async def deploy_hook(body: DeployHook, engine: EngineDep, token: WriterDep) -> dict:
    """Record a deploy from a pipeline as a change; the same id updates the same change."""
    fit("model", body.model, MAX_NAME - len("model:"), "the change's target is 'model:<model>'")
    t = now()
    ts = body.ts if body.ts is not None else t
    key = (
        body.id
        or "hook-"
        + hashlib.sha256(
            f"{body.model}|{body.version}|{body.stage}|{body.pipeline}|{ts}".encode()
        ).hexdigest()[:12]
    )
    pct = f" {body.canary_percent:g}%" if body.canary_percent is not None else ""
    labels = {"model": body.model, "version": body.version}
    if body.instance:
        labels["instance"] = body.instance
    change = {
        "id": key,
        "kind": "deploy",
        "owner": body.owner,
        "person": body.person,
        "target": f"model:{body.model}",
        "summary": body.summary
        or f"{body.model} {body.version} {body.stage}{pct}"
        + (f" ({body.pipeline})" if body.pipeline else ""),
        "labels": labels,
        "ts": ts,
        "planned_ts": body.planned_ts,
        "rollout_stage": body.stage,
        "canary_percent": body.canary_percent,
        "version": body.version,
        "author": who(body.author, token),
        # The run that deployed it: where a rollback starts.
        "extra": {k: v for k, v in (("url", body.url), ("pipeline", body.pipeline)) if v},
    }
    return await write(engine, upsert_hook_change, change=change, now=t)
