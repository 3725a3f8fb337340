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
