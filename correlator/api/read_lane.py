"""The read lane: each read route family runs a bounded number of reads, apart from ingest.

A read of the PromQL, metadata, window or analysis routes first takes a place in its
family (settings ``read_lane_*``): at most ``size`` run at once, ``queue`` more wait up to
``wait`` seconds, and one client (its bearer token, else its address) holds at most
``per_client`` of them, running or waiting. Past these it gets 503 with ``Retry-After``
before any route, token lookup or query runs. An admitted read runs on the lane's worker
threads and its read engine, a pool of its own, so reads never hold a thread or a database
connection that ingest waits for.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter, deque
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import parse_qsl

import anyio.to_thread
from anyio import CapacityLimiter
from sqlalchemy import Engine
from starlette.responses import JSONResponse

from correlator.settings import ServiceSettings

# The route family of each read path; GET /api/v1/query_range with ``query`` is PromQL.
PATHS = {
    "/api/v1/query": "promql",
    "/api/v1/query_range": "window",
    "/api/v1/series": "metadata",
    "/api/v1/labels": "metadata",
    "/api/v1/metadata/metrics": "metadata",
    "/api/v1/analyze": "analysis",
}
FAMILIES = ("promql", "metadata", "window", "analysis")
# Families on Prometheus' HTTP API paths: their refusals also come in its error envelope.
PROMETHEUS = frozenset({"promql", "metadata", "window"})


def family_of(method: str, path: str, query_string: bytes) -> str | None:
    """Return the read family of a request, or None for a route outside the read lane."""
    if path.startswith("/api/v1/label/") and path.endswith("/values"):
        return "metadata"
    family = PATHS.get(path)
    if family == "window" and method != "GET":
        return "promql"  # POST /api/v1/query_range is PromQL's form
    if family == "window":
        names = {k for k, _v in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)}
        return "promql" if "query" in names else "window"
    return family


def client_of(scope) -> str:
    """Return who sends a request: its bearer token (hashed), else its address."""
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            return "token " + hashlib.sha256(value).hexdigest()[:24]
    client = scope.get("client")
    return "address " + (client[0] if client else "")


class Family:
    """The places of one route family: ``size`` running, ``queue`` waiting, few per client."""

    def __init__(self, name: str, size: int, queue: int, per_client: int):
        self.name, self.size, self.queue, self.per_client = name, size, queue, per_client
        self.running = 0
        self._turns: deque[asyncio.Future] = deque()
        self._clients: Counter[str] = Counter()

    @property
    def waiting(self) -> int:
        """Return how many reads wait for a place."""
        return len(self._turns)

    async def enter(self, client: str, wait: float) -> str | None:
        """Take a place for a client's read, waiting up to ``wait`` s; return why not, or None."""
        if self._clients[client] >= self.per_client:
            return "client"
        if self.running < self.size and not self._turns:
            self.running += 1
            self._clients[client] += 1
            return None
        if len(self._turns) >= self.queue or wait <= 0:
            return "full"
        turn = asyncio.get_running_loop().create_future()
        self._turns.append(turn)
        self._clients[client] += 1
        try:
            await asyncio.wait_for(turn, wait)
        except BaseException as exc:  # waited too long, or the client went away
            if turn.done() and not turn.cancelled():
                self.leave(client)  # the place came as the read gave up: pass it on
            else:
                self._turns.remove(turn)
                self._drop(client)
            if isinstance(exc, TimeoutError):
                return "waited"
            raise
        return None

    def leave(self, client: str) -> None:
        """Give a read's place back: to the first read waiting, else free it."""
        self._drop(client)
        while self._turns:
            turn = self._turns.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.running -= 1

    def _drop(self, client: str) -> None:
        self._clients[client] -= 1
        if self._clients[client] <= 0:
            del self._clients[client]


@dataclass
class Lanes:
    """The app's read families, the engine reads use and the threads they run on."""

    families: dict[str, Family]
    engine: Engine  # the app's engine: ingest and every write
    read_engine: Engine
    wait: float
    retry_after: int
    _limiter: tuple[asyncio.AbstractEventLoop, CapacityLimiter] | None = field(
        default=None, repr=False
    )

    @property
    def size(self) -> int:
        """Return how many reads may run at once over all families."""
        return sum(f.size for f in self.families.values())

    def limiter(self) -> CapacityLimiter:
        """Return the bound on the lane's worker threads (one per loop, made in it)."""
        loop = asyncio.get_running_loop()
        if self._limiter is None or self._limiter[0] is not loop:
            self._limiter = (loop, CapacityLimiter(self.size))
        return self._limiter[1]

    async def run(self, func, *args):
        """Run ``func`` on a lane thread, the app's engine among its arguments made the read one."""
        args = tuple(self.read_engine if a is self.engine else a for a in args)
        return await anyio.to_thread.run_sync(partial(func, *args), limiter=self.limiter())

    def refusal(self, family: str, why: str) -> JSONResponse:
        """Return the 503 for a read the family has no place for."""
        fam = self.families[family]
        setting = f"CAUSELINE_READ_LANE_{family.upper()}"
        if why == "client":
            reason = (
                f"this client already has {fam.per_client} {family} reads running or waiting "
                "(CAUSELINE_READ_LANE_PER_CLIENT)"
            )
        elif why == "waited":
            reason = (
                f"waited {self.wait:g} s for one of the {fam.size} {family} reads at once "
                f"({setting}, CAUSELINE_READ_LANE_WAIT_SECONDS)"
            )
        else:
            reason = (
                f"{fam.size} {family} reads are running and {fam.waiting} waiting "
                f"({setting}, CAUSELINE_READ_LANE_QUEUE)"
            )
        reason += f"; retry after {self.retry_after} s"
        body: dict = {"detail": {"field": "read lane", "reason": reason}}
        if family in PROMETHEUS:
            body = {"status": "error", "errorType": "unavailable", "error": reason, **body}
        headers = {"Retry-After": str(self.retry_after)}
        return JSONResponse(body, status_code=503, headers=headers)


_ADMITTED: ContextVar[Lanes | None] = ContextVar("read_lane", default=None)


def lane_size(settings: ServiceSettings) -> int:
    """Return how many reads may run at once over all families (the read pool's size)."""
    return (
        settings.read_lane_promql
        + settings.read_lane_metadata
        + settings.read_lane_window
        + settings.read_lane_analysis
    )


def lanes_from_settings(settings: ServiceSettings, *, engine: Engine, read_engine: Engine) -> Lanes:
    """Return the read lanes the settings describe."""
    sizes = {
        "promql": settings.read_lane_promql,
        "metadata": settings.read_lane_metadata,
        "window": settings.read_lane_window,
        "analysis": settings.read_lane_analysis,
    }
    families = {
        name: Family(name, sizes[name], settings.read_lane_queue, settings.read_lane_per_client)
        for name in FAMILIES
    }
    return Lanes(
        families=families,
        engine=engine,
        read_engine=read_engine,
        wait=settings.read_lane_wait_seconds,
        retry_after=settings.read_lane_retry_after_seconds,
    )


def admitted() -> Lanes | None:
    """Return the read lanes when the request being answered was admitted to one, else None."""
    return _ADMITTED.get()


class ReadLane:
    """ASGI middleware admitting read routes to their family's lane, or answering 503."""

    def __init__(self, app, lanes: Lanes):
        self.app = app
        self.lanes = lanes

    async def __call__(self, scope, receive, send):
        """Pass a read on once its family has a place; other requests pass at once."""
        family = None
        if scope["type"] == "http":
            family = family_of(scope["method"], scope["path"], scope.get("query_string", b""))
        if family is None:
            await self.app(scope, receive, send)
            return
        lane = self.lanes.families[family]
        client = client_of(scope)
        why = await lane.enter(client, self.lanes.wait)
        if why is not None:
            await self.lanes.refusal(family, why)(scope, receive, send)
            return
        token = _ADMITTED.set(self.lanes)
        try:
            await self.app(scope, receive, send)
        finally:
            _ADMITTED.reset(token)
            lane.leave(client)
