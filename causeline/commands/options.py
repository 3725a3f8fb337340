"""Options and argument types shared by subcommands, the settings they set, times and progress."""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from causeline.commands.errors import CliError
from dashboard.timeparse import UNITS, relative_seconds

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


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


_DURATION = re.compile(rf"(\d+(?:\.\d+)?)\s*([{''.join(UNITS)}]?)", re.IGNORECASE)
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
    relative = relative_seconds(cleaned)
    if relative is not None:
        return (time.time() if now is None else now) + relative
    try:
        moment = datetime.fromisoformat(cleaned.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time; give {TIME_FORMS}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def parse_duration(text: str) -> float:
    """Parse a duration: seconds, or a number with a unit (s, m, h, d, w) such as 2m."""
    m = _DURATION.fullmatch(text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration; give seconds or a number with a unit "
            f"({_UNIT_NAMES}) such as 90 or 2m"
        )
    return float(m.group(1)) * UNITS[(m.group(2) or "s").lower()]


def _bounded(text: str, kind: type, what: str, example: str, *, least: float, most=math.inf):
    """Return text as ``kind`` within [least, most]; else an argparse error naming the form."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or not least <= value <= most:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}; give one such as {example}")
    return value


def parse_count(text: str) -> int:
    """Parse a whole number of 0 or more (an argparse type)."""
    return _bounded(text, int, "a whole number of 0 or more", "7", least=0)


def parse_positive_count(text: str) -> int:
    """Parse a whole number of 1 or more (an argparse type)."""
    return _bounded(text, int, "a whole number of 1 or more", "20", least=1)


def parse_positive(text: str) -> float:
    """Parse a number above 0 (an argparse type)."""
    return _bounded(text, float, "a number above 0", "2.5", least=math.ulp(0.0))  # least > 0


def parse_port(text: str) -> int:
    """Parse a TCP port, 1 to 65535 (an argparse type)."""
    return _bounded(text, int, "a port from 1 to 65535", "8400", least=1, most=65535)


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


def settings_source(settings: ServiceSettings):
    """Return the Prometheus source the settings name, or None; a bad mapping is a CliError."""
    from correlator.promsource import MappingError, source_from_settings

    try:
        return source_from_settings(settings)
    except MappingError as exc:
        raise CliError(str(exc)) from exc


def iso_time(ts: float | None) -> str:
    """Return unix seconds as an ISO 8601 UTC time, e.g. 2024-11-25T08:00:00Z ('-' for none)."""
    if ts is None:
        return "-"
    try:
        return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError, OverflowError, OSError):
        return str(ts)


class Progress:
    """Print a progress line to stderr when it is a terminal, else at most a few lines."""

    def __init__(self, what: str, unit: str = "samples"):
        self.what = what
        self.unit = unit
        self.tty = sys.stderr.isatty()
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        pct = 100 if total == 0 else int(100 * done / total)
        if self.tty:
            print(
                f"\r{self.what}: {done:,}/{total:,} {self.unit} ({pct}%)",
                end="",
                file=sys.stderr,
                flush=True,
            )
            if done >= total:
                print(file=sys.stderr)
        elif pct // 25 != self.last // 25 or done >= total:
            print(f"{self.what}: {done:,}/{total:,} {self.unit} ({pct}%)", file=sys.stderr)
        self.last = pct
