"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
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


def parse_time(text: str) -> float:
    """Parse unix seconds or an ISO 8601 time (UTC when no zone is given)."""
    try:
        return float(text)
    except ValueError:
        pass
    cleaned = text.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither unix seconds nor an ISO 8601 time such as 2024-11-25T08:00Z"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


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
    from causeline.cli import CliError
    from correlator.promsource import MappingError, source_from_settings
    from correlator.settings import ServiceSettings

    try:
        return source_from_settings(ServiceSettings(**prometheus_settings(args)))
    except MappingError as exc:
        raise CliError(str(exc)) from exc
