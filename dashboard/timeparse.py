"""Time ranges of URLs and presets."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

MAX_TS = 1e11  # unix seconds the service accepts (year 5138)
PRESETS = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400}
DEFAULT_PRESET = "6h"


def parse_when(text: str | None) -> float | None:
    """Parse unix seconds or an ISO 8601 time (UTC without a zone); None when absent or bad."""
    if not text or not isinstance(text, str):
        return None
    try:
        value = float(text)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
            value = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
        except (ValueError, OverflowError):
            return None
    return value if math.isfinite(value) and 0 <= value <= MAX_TS else None


def preset_window(preset: str, now: float | None = None) -> tuple[float, float]:
    """Return the (start, end) of a preset ending now."""
    end = float(now if now is not None else time.time())
    return end - PRESETS.get(preset, PRESETS[DEFAULT_PRESET]), end


def fmt(ts: float | None) -> str:
    """Format unix seconds as a short UTC time."""
    if ts is None:
        return "—"
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError, TypeError):
        return str(ts)


def axis_time(value) -> float:
    """Parse a Plotly date-axis value (a UTC date string or epoch ms) into unix seconds."""
    if isinstance(value, int | float):
        return float(value) / 1000.0
    moment = datetime.fromisoformat(str(value).replace(" ", "T"))
    return moment.replace(tzinfo=UTC).timestamp()
