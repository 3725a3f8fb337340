"""The Host header check: refuse names the service is not known by (DNS rebinding)."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.responses import PlainTextResponse

WILDCARDS = frozenset({"0.0.0.0", "::", ""})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
# Liveness probes (Kubernetes sends the pod address as Host) get through; it reveals nothing.
EXEMPT_PATHS = frozenset({"/healthz"})


def host_name(header: str) -> str:
    """Return the name part of a Host header value: no port, no IPv6 brackets, lower case."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    name, colon, port = value.rpartition(":")
    return name if colon and port.isdigit() and ":" not in name else value


def allowed_hosts(*, bind_host: str, extra: str | None, public_url: str | None) -> frozenset | None:
    """Return the Host names requests may use, or None when any is accepted.

    Always the loopback names, the bind address and the public URL's host, plus the
    comma-separated ``extra``; ``*`` in ``extra``, or a wildcard bind with no ``extra``,
    accepts any name.
    """
    names = {n.strip().lower() for n in (extra or "").split(",") if n.strip()}
    if "*" in names or (bind_host in WILDCARDS and not names):
        return None
    names |= LOOPBACK_NAMES
    if bind_host not in WILDCARDS:
        names.add(host_name(bind_host) if bind_host.startswith("[") else bind_host.lower())
    public_host = urlsplit(public_url).hostname if public_url else None
    if public_host:
        names.add(public_host.lower())
    return frozenset(names)


class HostCheck:
    """ASGI middleware answering 421 to a request whose Host is not an allowed name."""

    def __init__(self, app, allowed: frozenset | None):
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope, receive, send):
        """Pass the request on, or refuse it when its Host is unknown."""
        if (
            scope["type"] == "http"
            and self.allowed is not None
            and scope.get("path") not in EXEMPT_PATHS
        ):
            header = dict(scope.get("headers") or ()).get(b"host", b"").decode("latin-1")
            if host_name(header) not in self.allowed:
                response = PlainTextResponse(
                    f"unknown Host {header[:100]!r}: add it to CAUSELINE_ALLOWED_HOSTS",
                    status_code=421,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
