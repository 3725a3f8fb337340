"""Small fake metric sources for agent tests."""

from __future__ import annotations

from collector.reading import Reading


class Counter:
    """A source whose one series counts its samplings: 1, 2, 3..."""

    name = "counter"

    def __init__(self):
        self.n = 0

    def sample(self):
        """Return the next count."""
        self.n += 1
        r = Reading()
        r.add("c", self.n, {"host": "h"})
        return r

    def close(self):
        """Nothing to release."""
