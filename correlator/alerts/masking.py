"""Masks for secrets (webhook URLs, signing keys) in logs, errors and API answers."""

from __future__ import annotations

from urllib.parse import urlsplit


def mask_secret(secret: str | None) -> str | None:
    """Return '****' plus at most the last 2 characters of a secret (None stays None)."""
    if not secret:
        return None
    return "****" + (secret[-2:] if len(secret) >= 12 else "")


def mask_url(url: str) -> str:
    """Return scheme and host of a URL; the path and query (the webhook's key) are masked."""
    parts = urlsplit(url)
    if not parts.netloc:
        return "****"
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    tail = rest[-4:] if len(rest) >= 16 else ""
    return f"{parts.scheme}://{host}/****{tail}" if rest.strip("/") else f"{parts.scheme}://{host}"


def scrub(text: str, *secrets: str | None) -> str:
    """Return text with every given secret (and a URL's path) replaced by its mask."""
    for secret in secrets:
        if not secret:
            continue
        masked = mask_url(secret) if "://" in secret else mask_secret(secret)
        text = text.replace(secret, masked or "****")
        parts = urlsplit(secret)
        if parts.path.strip("/"):
            text = text.replace(parts.path, "/****")
        if parts.query:
            text = text.replace(parts.query, "****")
    return text
