"""Response headers for transfer: compress large bodies, never let a cache keep API data."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.middleware.gzip import GZipMiddleware

API_PREFIX = "/api/"
NO_STORE = "no-store"
# Below about 1 kB gzip saves little and costs a round of CPU per response.
MINIMUM_GZIP_BYTES = 1024


class NoStoreApi:
    """ASGI middleware adding ``Cache-Control: no-store`` to API responses that set none."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        """Pass the request on; mark an API response as not to be stored."""
        if scope["type"] != "http" or not scope.get("path", "").startswith(API_PREFIX):
            await self.app(scope, receive, send)
            return

        async def marked(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Cache-Control", NO_STORE)
            await send(message)

        await self.app(scope, receive, marked)


def add_transfer_middleware(app) -> None:
    """Compress responses (anything mounted on ``app`` too) and mark API data not cacheable."""
    app.add_middleware(NoStoreApi)
    app.add_middleware(GZipMiddleware, minimum_size=MINIMUM_GZIP_BYTES)
