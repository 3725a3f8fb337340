"""ASGI middleware (FastAPI / Starlette) that records every HTTP request in a probe.

A handler reaches the request handle as ``request.state.causeline`` to set
``score``, ``input_length``, ``batch_size`` or ``status`` ("fallback").
"""

from __future__ import annotations

from collector.probe import Probe

TIMEOUT_CODES = (408, 504)


class ProbeMiddleware:
    """Time each HTTP request and classify it by status code."""

    def __init__(self, app, probe: Probe, paths: tuple[str, ...] | None = None):
        self.app = app
        self.probe = probe
        self.paths = paths

    async def __call__(self, scope, receive, send):
        """Pass the request through, recording latency and outcome."""
        if scope["type"] != "http" or (
            self.paths is not None and not scope["path"].startswith(self.paths)
        ):
            await self.app(scope, receive, send)
            return
        handle = self.probe.request()
        scope.setdefault("state", {})["causeline"] = handle
        code = 500

        async def send_wrapper(message):
            nonlocal code
            if message["type"] == "http.response.start":
                code = message["status"]
            await send(message)

        with handle:
            try:
                await self.app(scope, receive, send_wrapper)
            finally:
                if handle.status is None:
                    if code in TIMEOUT_CODES:
                        handle.status = "timeout"
                    elif code >= 500:
                        handle.status = "error"
