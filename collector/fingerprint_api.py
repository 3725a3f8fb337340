"""Client of the service's fingerprint endpoints."""

from __future__ import annotations

import httpx

FINGERPRINTS_PATH = "/api/v1/fingerprints"


def post_fingerprint(
    client: httpx.Client,
    server: str,
    token: str,
    *,
    host: str,
    fingerprint: dict,
    ts: float,
    instance: str | None = None,
    model: str | None = None,
) -> None:
    """Send one fingerprint; raise ``httpx.HTTPError`` when it was not stored."""
    resp = client.post(
        server.rstrip("/") + FINGERPRINTS_PATH,
        headers={"Authorization": f"Bearer {token}"},
        json={
            "host": host,
            "instance": instance,
            "model": model,
            "ts": ts,
            "fingerprint": fingerprint,
        },
    )
    resp.raise_for_status()


def latest_fingerprint(
    client: httpx.Client, server: str, host: str, token: str | None = None
) -> dict:
    """Return ``{"host", "ts", "fingerprint"}`` of the latest fingerprint of ``host``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    resp = client.get(
        server.rstrip("/") + FINGERPRINTS_PATH + "/latest", params={"host": host}, headers=headers
    )
    resp.raise_for_status()
    return resp.json()
