"""Time ranges of URLs and presets."""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MAX_TS = 1e11  # unix seconds the service accepts (year 5138)
PRESETS = {
    "15m": 900,
    "1h": 3600,
    "3h": 3 * 3600,
    "6h": 6 * 3600,
    "12h": 12 * 3600,
    "24h": 86400,
    "2d": 2 * 86400,
    "7d": 7 * 86400,
}
DEFAULT_PRESET = "6h"
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_NUMBER = r"(\d+(?:\.\d+)?)\s*([smhdw])"
_FROM_NOW = re.compile(rf"now(?:\s*([+-])\s*{_NUMBER})?", re.IGNORECASE)
_AGO = re.compile(rf"{_NUMBER}\s+ago", re.IGNORECASE)
TIME_HINT = "a time such as now-2h, 2h ago, 2024-11-25 08:00 (UTC) or unix seconds"


def relative_seconds(text: str) -> float | None:
    """Return the offset from now of ``now``, ``now-2h``, ``now+15m`` or ``2h ago``; else None."""
    if m := _FROM_NOW.fullmatch(text):
        if m.group(1) is None:
            return 0.0
        offset = float(m.group(2)) * UNITS[m.group(3).lower()]
        return offset if m.group(1) == "+" else -offset
    if m := _AGO.fullmatch(text):
        return -float(m.group(1)) * UNITS[m.group(2).lower()]
    return None


def parse_when(
    text: str | None, *, now: float | None = None, zone: str | None = None
) -> float | None:
    """Parse unix seconds, ISO 8601 or now-2h / 2h ago; None when bad.

    An ISO time without its own zone is read in ``zone`` (an IANA name), UTC by default.
    """
    if not text or not isinstance(text, str):
        return None
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        relative = relative_seconds(text)
        if relative is not None:
            value = (time.time() if now is None else now) + relative
        else:
            try:
                moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
                if moment.tzinfo is None:
                    local = known_zone(zone)
                    moment = moment.replace(tzinfo=UTC if local == "UTC" else ZoneInfo(local))
                value = moment.timestamp()
            except (ValueError, OverflowError):
                return None
    return value if math.isfinite(value) and 0 <= value <= MAX_TS else None


def known_zone(zone: str | None) -> str:
    """Return ``zone`` when it is an IANA time zone this machine knows, else 'UTC'."""
    if not zone or not isinstance(zone, str) or len(zone) > 64:
        return "UTC"
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return "UTC"
    return zone


def zone_offset(zone: str | None, at: float) -> float:
    """Return a time zone's offset from UTC in seconds at ``at``; 0 for UTC or an unknown zone."""
    zone = known_zone(zone)
    if zone == "UTC":
        return 0.0
    try:
        delta = datetime.fromtimestamp(at, ZoneInfo(zone)).utcoffset()
    except (ValueError, OverflowError, OSError):
        return 0.0
    return delta.total_seconds() if delta else 0.0


def zone_label(zone: str | None, at: float) -> str:
    """Return how a zone reads on a page: 'UTC' or 'Europe/Berlin (UTC+01:00)'."""
    zone = known_zone(zone)
    if zone == "UTC":
        return "UTC"
    offset = zone_offset(zone, at)
    sign = "+" if offset >= 0 else "-"
    hours, minutes = divmod(int(abs(offset)) // 60, 60)
    return f"{zone} (UTC{sign}{hours:02d}:{minutes:02d})"


def preset_window(preset: str, now: float | None = None) -> tuple[float, float]:
    """Return the (start, end) of a preset ending now."""
    end = float(now if now is not None else time.time())
    return end - PRESETS.get(preset, PRESETS[DEFAULT_PRESET]), end


def fmt(ts: float | None, zone: str | None = None) -> str:
    """Format unix seconds as a short time in UTC, or in ``zone`` (an IANA name) when given."""
    if ts is None:
        return "—"
    zone = known_zone(zone)
    try:
        if zone != "UTC":
            return datetime.fromtimestamp(ts, ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S %Z")
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError, TypeError):
        return str(ts)


def lead(seconds: float | None) -> str:
    """Say how long before (or after) the breach an onset came: 45 s, 12 min, 2.5 h."""
    if seconds is None or not math.isfinite(seconds):
        return ""
    s = abs(seconds)
    said = f"{s:.0f} s" if s < 90 else f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"
    return said if seconds >= 0 else f"{said} after"


def axis_time(value) -> float:
    """Parse a Plotly date-axis value (a UTC date string or epoch ms) into unix seconds."""
    if isinstance(value, int | float):
        return float(value) / 1000.0
    moment = datetime.fromisoformat(str(value).replace(" ", "T"))
    return moment.replace(tzinfo=UTC).timestamp()
