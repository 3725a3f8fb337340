"""The HTTP sender the worker uses; tests may pass any object with the same ``post``."""

from __future__ import annotations

import codecs
import socket
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import httpcore
import httpx

from correlator.alerts.channels import HttpRequest
from correlator.alerts.targets import host_address, refused_resolved

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


Resolver = Callable[[str, int], list[str]]
MAX_ANSWER = 8192  # bytes of a receiver's answer read; 2,000 characters of them are kept


class RefusedTarget(ValueError):
    """A channel's host resolved to an address causeline does not send to."""


def resolve(host: str, port: int) -> list[str]:
    """Return every address ``host`` resolves to for a TCP connection, in resolver order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class GuardedBackend(httpcore.SyncBackend):
    """Resolve each host once, refuse it by ``targets``' rule, connect to what was checked.

    The check and the connection use the same addresses, so a name that resolves to a
    public address when checked cannot resolve to cloud metadata when connected.
    """

    def __init__(self, settings: ServiceSettings | None, resolver: Resolver = resolve):
        self._settings = settings
        self._resolve = resolver

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore.NetworkStream:
        """Connect to the first address of ``host`` that answers, once all are allowed."""
        try:
            literal = host_address(host) is not None
            addresses = [host] if literal else self._resolve(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve the channel's host: {exc}") from None
        why = refused_resolved(host, port, addresses, self._settings)
        if why:
            raise RefusedTarget(
                f"refused at send time: {why}; list the host in CAUSELINE_ALERT_ALLOWED_HOSTS "
                "to allow it"
            )
        error: Exception = httpcore.ConnectError(f"{host} resolved to no address")
        for address in addresses:
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        raise error


class HttpTransport:
    """POST requests over one httpcore connection pool, so no URL is ever logged.

    (httpx.Client logs every request's full URL at INFO, and a webhook URL is a secret.)
    Every connection goes through ``GuardedBackend``: the host's addresses are checked
    against the refused targets just before connecting. ``settings`` add this service's
    own address and the allow-list; without them metadata, link-local and "this host"
    are still refused.
    """

    def __init__(
        self,
        timeout: float = 10.0,
        *,
        settings: ServiceSettings | None = None,
        resolver: Resolver = resolve,
    ):
        self._timeout = httpx.Timeout(timeout).as_dict()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            retries=0,
            network_backend=GuardedBackend(settings, resolver),
        )

    def post(self, request: HttpRequest) -> tuple[int, str]:
        """Send one request; return (status, answer text); raise on no answer.

        Raises ``RefusedTarget`` when the host resolves to a refused address.
        """
        with self._pool.stream(
            "POST",
            request.url,
            headers=list(request.headers.items()),
            content=request.body,
            extensions={"timeout": self._timeout},
        ) as resp:
            body = b""
            for chunk in resp.iter_stream():  # a long answer is not read past MAX_ANSWER
                body += chunk
                if len(body) >= MAX_ANSWER:
                    break
            types = [v for k, v in resp.headers if k.lower() == b"content-type"]
            text = body[:MAX_ANSWER].decode(_charset(types[0] if types else b""), "replace")
            return resp.status, text[:2000]

    def close(self) -> None:
        """Close the connection pool."""
        self._pool.close()


def _charset(content_type: bytes) -> str:
    """Return the charset a Content-Type names when Python knows it, else UTF-8."""
    for param in content_type.decode("latin-1").split(";")[1:]:
        key, _, value = param.strip().partition("=")
        if key.lower() == "charset":
            try:
                return codecs.lookup(value.strip("\"' ")).name
            except LookupError:
                break
    return "utf-8"
