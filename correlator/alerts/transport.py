"""The HTTP sender the worker uses; tests may pass any object with the same ``post``."""

from __future__ import annotations

import httpx

from correlator.alerts.channels import HttpRequest


class HttpTransport:
    """POST requests over one connection pool, below httpx.Client so no URL is ever logged.

    (httpx.Client logs every request's full URL at INFO, and a webhook URL is a secret.)
    """

    def __init__(self, timeout: float = 10.0):
        self._timeout = httpx.Timeout(timeout).as_dict()
        self._pool = httpx.HTTPTransport(retries=0)

    def post(self, request: HttpRequest) -> tuple[int, str]:
        """Send one request; return (status, answer text); raise httpx errors on no answer."""
        req = httpx.Request(
            "POST",
            request.url,
            content=request.body,
            headers=request.headers,
            extensions={"timeout": self._timeout},
        )
        resp = self._pool.handle_request(req)
        try:
            resp.read()
            return resp.status_code, resp.text[:2000]
        finally:
            resp.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._pool.close()
