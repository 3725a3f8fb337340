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


MIN_SECRET = 8  # shorter header values (``json``, ``1``) would mask ordinary words
MIN_PREFIX = 3  # a cut secret's shorter remnant tells nothing the mask does not


def channel_secrets(url: str, secret: str | None, headers: dict[str, str]) -> list[str]:
    """Return what must never be stored of a channel: URL, signing secret, header values."""
    values = [url, secret or ""]
    for value in headers.values():
        values.append(value)
        values.extend(part for part in value.split() if len(part) >= MIN_SECRET)
    return [v for v in values if len(v) >= MIN_SECRET or v in (url, secret)]


def _mask_tail(text: str, secrets: tuple[str, ...]) -> str:
    """Mask the start of a secret that a cut left at the end of the text."""
    for secret in secrets:
        for size in range(min(len(secret), len(text)) - 1, MIN_PREFIX - 1, -1):
            if text.endswith(secret[:size]):
                return text[:-size] + "****"
    return text


def scrub_cut(text: str, limit: int, *secrets: str | None) -> str:
    """Return text scrubbed of secrets, then cut to ``limit``; no secret's start survives a cut."""
    given = tuple(s for s in secrets if s)
    text = _mask_tail(scrub(text, *given), given)  # the text may arrive already cut
    return _mask_tail(text[:limit], given) if len(text) > limit else text
