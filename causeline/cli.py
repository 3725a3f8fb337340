"""The ``causeline`` command: a thin composition root over the subcommand modules."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from causeline.commands.errors import CliError, database_unreachable

# Each module defines ``register(subparsers)``; the server stack is imported only
# inside the command that needs it, so the agent install stays light.
COMMAND_MODULES = [
    "causeline.commands.up",
    "causeline.commands.dashboard",
    "causeline.commands.serve",
    "causeline.commands.db",
    "causeline.commands.token",
    "causeline.commands.bundle_io",
    "causeline.commands.analyze",
    "causeline.commands.agent",
    "causeline.commands.env",
    "causeline.commands.change",
    "causeline.commands.incident",
    "causeline.commands.sla",
    "causeline.commands.model",
    "causeline.commands.oncall",
    "causeline.commands.capacity",
    "causeline.commands.alert",
    "causeline.commands.openapi",
]

EPILOG = """examples:
  causeline serve --port 8400                 # ingest API and queries on the embedded SQLite
  causeline token create gpu-node-1           # a token for one agent
  causeline import ../shared/scenarios/public/01-input-length-drift
  causeline export ./incident --from 2024-11-25T08:00Z --to 2024-11-25T10:00Z
"""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="causeline",
        description="One timeline for ML serving incidents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug output")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not args.verbose:
        for name in ("alembic", "httpx", "httpcore"):  # one line per request is debug output
            logging.getLogger(name).setLevel(logging.WARNING)
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that went away (| head) shows here, not at exit
        return status
    except BrokenPipeError:
        # The reader of our output left (`causeline incident show 2 | head`): stop quietly,
        # with stdout pointed at nothing so the interpreter's last flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE
    except CliError as exc:
        print(f"causeline {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        said = _settings_error(exc) or _database_error(exc, args)
        if said is None:
            raise
        print(f"causeline {args.command}: error: {said}", file=sys.stderr)
        return 2


def _settings_error(exc: Exception) -> str | None:
    """Return each refused setting's variable, value and reason, else None.

    Options that commands pass into settings are checked by argparse first, so a refused
    setting came from its variable.
    """
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(exc, pydantic.ValidationError):
        return None
    try:  # the classes name their variables' prefixes (model_config's env_prefix)
        from correlator.settings import ServiceSettings
        from dashboard.settings import DashboardSettings
    except ImportError:  # the agent's install: no settings of the service here
        return None
    classes = {cls.__name__: cls for cls in (ServiceSettings, DashboardSettings)}
    if exc.title not in classes:
        return None
    prefix = classes[exc.title].model_config.get("env_prefix", "")
    said = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"])
        said.append(f"{prefix}{name.upper()}={error['input']!r}: {error['msg']}")
    return "; ".join(said)


def _database_error(exc: Exception, args: argparse.Namespace) -> str | None:
    """Return the one line for a database that cannot be opened, else None."""
    if "sqlalchemy" not in sys.modules:
        return None
    from correlator.settings import resolve_database_url

    return database_unreachable(exc, resolve_database_url(getattr(args, "database_url", None)))


if __name__ == "__main__":
    sys.exit(main())
