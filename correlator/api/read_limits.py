"""The bounds of one read request, from the settings, and the answers that refuse a read."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException
from starlette.concurrency import run_in_threadpool

from correlator.api.deps import SettingsDep
from correlator.api.read_lane import admitted
from correlator.store.tsdb import ReadBoundError, TooManyPoints

NARROW = "narrow it: a shorter window, a larger step or a more specific selector"


@dataclass(frozen=True)
class ReadLimits:
    """How many series and points one read may take, and until when it may run."""

    max_series: int
    max_points: int
    seconds: float
    deadline: float  # time.monotonic()

    def series_cap(self, asked: int) -> int:
        """Return the series a request may select: what it asked, at most the bound."""
        return min(asked, self.max_series)

    def too_many_series(self, limit: int) -> HTTPException:
        """Return the 422 for a selector that selects more than ``limit`` series."""
        where = " (CAUSELINE_READ_MAX_SERIES)" if limit == self.max_series else ""
        reason = (
            f"selects more than {limit} series{where}; narrow it: name the metric "
            "or add label matchers"
        )
        return HTTPException(422, {"field": "match", "reason": reason})

    def too_many_points(self) -> HTTPException:
        """Return the 422 for a read that would answer more than ``max_points`` points."""
        reason = f"reads more than {self.max_points} points (CAUSELINE_READ_MAX_POINTS); {NARROW}"
        return HTTPException(422, {"field": "match", "reason": reason})

    def refusal(self, exc: ReadBoundError) -> HTTPException:
        """Return the answer to a read that passed a bound."""
        if isinstance(exc, TooManyPoints):
            return self.too_many_points()
        reason = f"took longer than {self.seconds:g} s (CAUSELINE_READ_TIMEOUT_SECONDS); {NARROW}"
        return HTTPException(503, {"field": "match", "reason": reason})


def read_limits(settings: SettingsDep) -> ReadLimits:
    """Return the bounds of the request starting now."""
    seconds = settings.read_timeout_seconds
    return ReadLimits(
        max_series=settings.read_max_series,
        max_points=settings.read_max_points,
        seconds=seconds,
        deadline=time.monotonic() + seconds,
    )


ReadLimitsDep = Annotated[ReadLimits, Depends(read_limits)]


async def bounded_read(limits: ReadLimits, func, *args):
    """Run a read in a worker thread, off the event loop; one past a bound gets its refusal.

    A read admitted to the read lane (correlator/api/read_lane.py) runs on the lane's
    threads, and an ``engine`` argument that is the app's engine becomes the read engine,
    so the read holds no thread or connection ingest waits for.
    """
    lanes = admitted()
    try:
        if lanes is None:
            return await run_in_threadpool(func, *args)
        return await lanes.run(func, *args)
    except ReadBoundError as exc:
        raise limits.refusal(exc) from exc
