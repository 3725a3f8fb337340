"""Counter increases between scrapes, correct across counter resets."""

from __future__ import annotations


class CounterDeltas:
    """Remember the last value of each counter and return its increase."""

    def __init__(self):
        self._last: dict[tuple, float] = {}

    def increase(self, key: tuple, value: float) -> float | None:
        """Return the increase since the last call (None the first time).

        A value below the last one means the counter restarted from zero (the
        server restarted), so the increase is the new value itself, as in
        Prometheus's ``rate()``.
        """
        last = self._last.get(key)
        self._last[key] = value
        if last is None:
            return None
        return value if value < last else value - last
