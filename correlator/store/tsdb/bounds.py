"""Errors a read raises when it passes one of its bounds (points, time)."""

from __future__ import annotations

import time


class ReadBoundError(Exception):
    """A read passed a bound the caller set; the caller says how to narrow it."""


class TooManyPoints(ReadBoundError):
    """A range read would return more than ``limit`` points."""

    def __init__(self, limit: int):
        super().__init__(f"more than {limit} points")
        self.limit = limit


class ReadTooSlow(ReadBoundError):
    """A read ran past its deadline."""

    def __init__(self):
        super().__init__("past the read deadline")


def check_deadline(deadline: float | None) -> None:
    """Raise ReadTooSlow when a ``time.monotonic()`` deadline has passed."""
    if deadline is not None and time.monotonic() > deadline:
        raise ReadTooSlow()
