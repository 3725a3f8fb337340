"""A loopback HTTP receiver for alert tests: records posts, can be down, checks signatures."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.helpers import free_port


class Receiver:
    """Record every POST; ``check(path, query, headers, body)`` returns (status, answer) to send."""

    def __init__(self, check=None, port: int | None = None):
        self.port = port or free_port()
        self.check = check or (lambda *a: (200, {"ok": True}))
        self.posts: list[dict] = []
        self._lock = threading.Lock()
        self._server = None

    @property
    def url(self) -> str:
        """Return the base URL."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Receiver:
        """Listen (again) on the same port."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                headers = {k: v for k, v in self.headers.items()}
                status, answer = outer.check(parts.path, query, headers, body)
                if 200 <= status < 300:
                    with outer._lock:
                        outer.posts.append(
                            {
                                "path": parts.path,
                                "query": query,
                                "headers": headers,
                                "body": body,
                                "json": json.loads(body or b"null"),
                                "at": time.time(),
                            }
                        )
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening: connections are refused until ``start``."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def wait_for(self, predicate, timeout: float = 20.0) -> list[dict]:
        """Wait until predicate(posts) holds; return the posts."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                posts = list(self.posts)
            if predicate(posts):
                return posts
            time.sleep(0.05)
        raise AssertionError(f"receiver never saw what was expected; got {len(self.posts)} posts")
