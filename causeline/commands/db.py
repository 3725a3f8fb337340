"""``causeline db``: upgrade the schema, apply retention, compact samples into chunks."""

from __future__ import annotations

from causeline.commands.errors import CliError, open_engine
from causeline.commands.options import (
    Progress,
    add_database_option,
    parse_count,
    parse_positive,
    subparser,
)


def register(sub) -> None:
    """Add the db subcommand group."""
    p = subparser(sub, "db", "manage the database schema", "causeline db upgrade")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    up = subparser(
        actions,
        "upgrade",
        "apply every pending migration",
        "causeline db upgrade --database-url postgresql+psycopg://root@127.0.0.1/test",
    )
    add_database_option(up)
    up.set_defaults(func=upgrade)
    cur = subparser(actions, "current", "print the schema revision", "causeline db current")
    add_database_option(cur)
    cur.set_defaults(func=current)
    ret = subparser(
        actions,
        "retain",
        "roll up and drop samples past retention (raw N days, 1-minute rollups longer)",
        "causeline db retain --dry-run --raw-days 7 --rollup-days 90",
    )
    add_database_option(ret)
    ret.add_argument("--raw-days", type=parse_count, default=None, help="raw days kept (default 7)")
    ret.add_argument(
        "--rollup-days",
        type=parse_count,
        default=None,
        help="1-minute rollup days kept (default 90)",
    )
    ret.add_argument("--dry-run", action="store_true", help="print what would go; change nothing")
    ret.set_defaults(func=retain)
    com = subparser(
        actions,
        "compact",
        "move raw samples older than the head into compressed chunks, an hour at a time "
        "(safe to stop and run again)",
        "causeline db compact --head-hours 2",
    )
    add_database_option(com)
    com.add_argument(
        "--head-hours",
        type=parse_positive,
        default=None,
        help="hours of recent samples left raw (default: the service's, 2; at least 1)",
    )
    com.set_defaults(func=compact_cmd)


def upgrade(args) -> int:
    """Apply pending migrations and print the revision reached."""
    from sqlalchemy.exc import OperationalError

    from correlator.store.migrate import current_revision
    from correlator.store.migrate import upgrade as do_upgrade

    engine = open_engine(args.database_url, schema=False)
    try:
        do_upgrade(engine)
        print(f"database at revision {current_revision(engine)}")
    except OperationalError as exc:
        raise CliError(f"cannot reach the database: {exc.orig}") from exc
    finally:
        engine.dispose()
    return 0


def current(args) -> int:
    """Print the current schema revision."""
    from correlator.store.migrate import current_revision

    engine = open_engine(args.database_url, schema=False)
    try:
        print(current_revision(engine) or "no schema (run `causeline db upgrade`)")
    finally:
        engine.dispose()
    return 0


def retain(args) -> int:
    """Run one retention pass (or a dry run) and print its report as JSON."""
    import json

    from correlator.settings import ServiceSettings
    from correlator.store.tsdb import run_retention

    defaults = ServiceSettings()
    engine = open_engine(args.database_url, schema=False)
    try:
        report = run_retention(
            engine=engine,
            raw_days=args.raw_days if args.raw_days is not None else defaults.raw_retention_days,
            rollup_days=(
                args.rollup_days if args.rollup_days is not None else defaults.rollup_retention_days
            ),
            dry_run=args.dry_run,
        )
    finally:
        engine.dispose()
    print(json.dumps(report.as_dict(), indent=2))
    return 0


def compact_cmd(args) -> int:
    """Compact every pending hour, with progress; print what was done as JSON."""
    import json

    from correlator.settings import ServiceSettings
    from correlator.store.tsdb import compact

    head = args.head_hours * 3600 if args.head_hours else ServiceSettings().compaction_head_seconds
    progress = Progress("compacting", unit="hours")
    engine = open_engine(args.database_url, schema=False)
    try:
        report = compact(
            engine=engine,
            head_seconds=head,
            max_hours=10**9,
            progress=lambda done, total, _report: progress(done, total),
        )
    finally:
        engine.dispose()
    print(json.dumps({k: v for k, v in report.as_dict().items() if k != "hours"}, indent=2))
    return 0
