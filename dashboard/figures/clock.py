"""Times as Plotly draws them: zone-free date strings.

Plotly reads a number on a date axis as milliseconds in the browser's own time zone, so the
same figure reads differently in Berlin and in Beijing. A date string carries no zone and is
drawn as written; the figures write every time that way, moved by the offset of the zone the
reader chose (0 for UTC).
"""

from __future__ import annotations

import numpy as np

MS_PER_S = 1000.0


def wall(ts: float, offset: float = 0.0) -> str:
    """Return unix seconds as the date string Plotly draws as written ('2024-01-01 08:00:00')."""
    return walls([ts], offset)[0]


def walls(ts, offset: float = 0.0) -> list[str]:
    """Return unix seconds as date strings to the millisecond, moved by ``offset`` seconds."""
    ms = np.rint((np.asarray(ts, dtype=np.float64) + offset) * MS_PER_S).astype("datetime64[ms]")
    return [t.replace("T", " ") for t in np.datetime_as_string(ms, unit="ms")]
