"""A causeline app served by uvicorn in a thread (stoppable, restartable) and a /metrics page."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import uvicorn

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.tokens import create_token


class Service:
    """The service on a SQLite file at a fixed loopback port; stop and start it at will."""

    def __init__(self, db_path, port: int):
        self.engine = make_engine(f"sqlite:///{db_path}")
        upgrade(self.engine)
        with write_transaction(self.engine) as conn:
            self.token = create_token(conn=conn, name="pusher")
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        """Serve a fresh app (as a restarted process would) and wait until it listens."""
        settings = ServiceSettings(database_url=str(self.engine.url), bind_port=self.port)
        app = create_app(settings, engine=self.engine)
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the service did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop serving; connections are refused until the next start."""
        if self.server is not None:
            self.server.should_exit = True
            self.thread.join(15)
            self.server = None

    def series(self, match: str) -> list[dict]:
        """Return the query_range result (all samples) of a selector."""
        resp = httpx.get(
            f"{self.url}/api/v1/query_range",
            params={"match": match, "start": 0, "end": 4e9},
            timeout=10,
        )
        resp.raise_for_status()
        return resp.json()["data"]["result"]


class MetricsPage:
    """A tiny exposition endpoint; ``text()`` builds each response (scrapes are counted)."""

    def __init__(self, port: int, text):
        self.scrapes = 0
        page = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                page.scrapes += 1
                body = text(page.scrapes).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        """Stop answering scrapes."""
        self.server.shutdown()
        self.server.server_close()
