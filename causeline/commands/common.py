"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import math
import re
import time
from datetime import UTC, datetime


def add_database_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--database-url`` (default: $CAUSELINE_DATABASE_URL, else the SQLite file)."""
    parser.add_argument(
        "--database-url",
        default=None,
        help="SQLAlchemy URL, e.g. postgresql+psycopg://user@db/causeline "
        "(default: $CAUSELINE_DATABASE_URL, else the embedded SQLite file)",
    )


def subparser(sub, name: str, help_text: str, example: str) -> argparse.ArgumentParser:
    """Add a subcommand whose ``--help`` ends with an example."""
    return sub.add_parser(
        name,
        help=help_text,
        description=help_text,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AMOUNT = r"(\d+(?:\.\d+)?)\s*"
_UNIT = f"[{''.join(UNITS)}]"
_NUMBER = rf"{_AMOUNT}({_UNIT})"
_FROM_NOW = re.compile(rf"now(?:\s*([+-])\s*{_NUMBER})?", re.IGNORECASE)
_AGO = re.compile(rf"{_NUMBER}\s+ago", re.IGNORECASE)
_DURATION = re.compile(rf"{_AMOUNT}({_UNIT}?)", re.IGNORECASE)
_UNIT_NAMES = ", ".join(UNITS)
TIME_FORMS = (
    "unix seconds, ISO 8601 (2024-11-25T08:00Z), now, now-2h, now+15m "
    f"or 2h ago (units {_UNIT_NAMES})"
)


def parse_time(text: str, *, now: float | None = None) -> float:
    """Parse unix seconds, ISO 8601 (UTC when no zone), ``now[+-N<unit>]`` or ``N<unit> ago``."""
    cleaned = text.strip()
    try:
        seconds = float(cleaned)
    except ValueError:
        pass
    else:
        if not math.isfinite(seconds):
            raise argparse.ArgumentTypeError(f"{text!r} is not a time; give {TIME_FORMS}")
        return seconds
    relative = _relative(cleaned)
    if relative is not None:
        return (time.time() if now is None else now) + relative
    try:
        moment = datetime.fromisoformat(cleaned.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time; give {TIME_FORMS}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _relative(text: str) -> float | None:
    if m := _FROM_NOW.fullmatch(text):
        if m.group(1) is None:
            return 0.0
        offset = float(m.group(2)) * UNITS[m.group(3).lower()]
        return offset if m.group(1) == "+" else -offset
    if m := _AGO.fullmatch(text):
        return -float(m.group(1)) * UNITS[m.group(2).lower()]
    return None


def parse_duration(text: str) -> float:
    """Parse a duration: seconds, or a number with a unit (s, m, h, d, w) such as 2m."""
    m = _DURATION.fullmatch(text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration; give seconds or a number with a unit "
            f"({_UNIT_NAMES}) such as 90 or 2m"
        )
    return float(m.group(1)) * UNITS[(m.group(2) or "s").lower()]


def add_prometheus_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--prometheus URL`` and ``--mapping FILE`` (default: $CAUSELINE_PROMETHEUS_*)."""
    parser.add_argument(
        "--prometheus",
        metavar="URL",
        default=None,
        help="read the metrics the mapping names from this Prometheus-compatible server "
        "(default: $CAUSELINE_PROMETHEUS_URL, else everything from the store)",
    )
    parser.add_argument(
        "--mapping",
        metavar="FILE",
        default=None,
        help="with a Prometheus URL: the mapping YAML "
        "(default: $CAUSELINE_PROMETHEUS_MAPPING, else the built-in mapping)",
    )


def prometheus_settings(args: argparse.Namespace) -> dict:
    """Return the ServiceSettings fields that --prometheus and --mapping set."""
    given = {
        "prometheus_url": getattr(args, "prometheus", None),
        "prometheus_mapping": getattr(args, "mapping", None),
    }
    return {k: v for k, v in given.items() if v}


def metric_source(args: argparse.Namespace):
    """Return the Prometheus source the options (else CAUSELINE_PROMETHEUS_*) name, or None."""
    return service_settings(args)[1]


def service_settings(args: argparse.Namespace):
    """Return the service settings (alert routes, Prometheus) a command runs with, and its source.

    A command that changes incidents does so as the service does: its messages go to the same
    routes (CAUSELINE_ALERT_ROUTES_*), its metrics come from the same place.
    """
    from correlator.settings import ServiceSettings

    settings = ServiceSettings(**prometheus_settings(args))
    return settings, settings_source(settings)


def settings_source(settings):
    """Return the Prometheus source the settings name, or None; a bad mapping is a CliError."""
    from causeline.cli import CliError
    from correlator.promsource import MappingError, source_from_settings

    try:
        return source_from_settings(settings)
    except MappingError as exc:
        raise CliError(str(exc)) from exc
