"""What the subcommands keeping the process's records share (change, model, incident, oncall, sla).

Their options (--database-url, --author), their connections, and how they print records.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import time
from contextlib import contextmanager

from causeline.commands.errors import CliError, open_engine
from causeline.commands.options import add_database_option


@contextmanager
def writing(args):
    """Yield a connection in a write transaction on the command's database."""
    from correlator.store.engine import write_transaction

    engine = open_engine(args.database_url, named_file_must_exist=True)
    try:
        with write_transaction(engine) as conn:
            yield conn
    finally:
        engine.dispose()


@contextmanager
def reading(args):
    """Yield a read connection on the command's database."""
    engine = open_engine(args.database_url, named_file_must_exist=True)
    try:
        with engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()


class _DeprecatedAlias(argparse.Action):
    """Store the value like the new flag, with a warning on stderr."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"causeline: {option_string} is deprecated; use --author", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_common(parser, *, author: bool = False) -> None:
    """Add --database-url (and --author, with the hidden old --person) to a subcommand."""
    add_database_option(parser)
    if author:
        parser.add_argument(
            "--author", default=None, help="the person behind the write (default: login name)"
        )
        parser.add_argument(
            "--person", dest="author", action=_DeprecatedAlias, help=argparse.SUPPRESS
        )


def key_values(pairs: list[str], flag: str) -> dict[str, str]:
    """Return the KEY=VALUE pairs given to ``flag`` as a dict; raise CliError on a bad one."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"{flag} {pair!r}: expected KEY=VALUE")
        out[key] = value
    return out


def author_of(args) -> str:
    """Return the author to record."""
    return getattr(args, "author", None) or getpass.getuser()


def show(obj) -> None:
    """Print an object as indented JSON, control characters escaped (stored text may hold C1)."""
    from correlator.text import printable

    print(printable(json.dumps(obj, indent=2, ensure_ascii=False, default=str), lines=True))


def when(ts: float | None) -> str:
    """Return a UTC time for a table cell."""
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts))
