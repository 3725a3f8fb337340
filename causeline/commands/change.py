"""``causeline change``: register planned and done changes, and list the calendar."""

from __future__ import annotations

import time

from causeline.commands.errors import CliError
from causeline.commands.options import parse_time, subparser
from causeline.commands.records import (
    add_common,
    author_of,
    key_values,
    reading,
    show,
    when,
    writing,
)
from correlator.vocabulary import CHANGE_KINDS, ROLLOUT_STAGES, TEAMS


def register(sub) -> None:
    """Add the change subcommand and its actions."""
    p = subparser(
        sub,
        "change",
        "the change calendar: register changes ahead, mark them done, list them",
        "causeline change add --kind deploy --owner algo --target model:click_rank_v3 "
        '--summary "3.3.0 canary 5%" --planned 2024-12-03T10:00Z --stage canary',
    )
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = subparser(
        acts,
        "add",
        "register a change (planned with --planned, done with --at)",
        "causeline change add --kind config --owner infra --target service:user-features "
        '--summary "raise pool size" --at now-10m --author wang.fang',
    )
    add.add_argument("--kind", required=True, choices=CHANGE_KINDS)
    add.add_argument("--owner", required=True, choices=TEAMS, help="owning team")
    add.add_argument(
        "--target", default="", help="model:NAME, instance:ID, service:NAME, host:NAME"
    )
    add.add_argument("--summary", default="")
    add.add_argument("--scope", default=None, help="impact scope in words")
    add.add_argument("--planned", type=parse_time, default=None, help="planned time")
    add.add_argument("--at", type=parse_time, default=None, help="when it happened")
    add.add_argument(
        "--stage", choices=ROLLOUT_STAGES, default=None, help="rollout stage of a deploy"
    )
    add.add_argument("--canary-percent", type=float, default=None)
    add.add_argument("--version", default=None)
    add.add_argument("--label", action="append", default=[], help="KEY=VALUE (repeatable)")
    add.add_argument("--id", default=None, help="change id (default: generated)")
    add_common(add, author=True)
    add.set_defaults(func=add_cmd)
    done = subparser(
        acts, "done", "mark a planned change as done", "causeline change done chg-5f2a91c0 --at now"
    )
    done.add_argument("id")
    done.add_argument("--at", type=parse_time, default=None, help="when (default: now)")
    done.add_argument("--stage", choices=ROLLOUT_STAGES, default=None)
    add_common(done, author=True)
    done.set_defaults(func=done_cmd)
    ls = subparser(
        acts,
        "list",
        "list changes in a window",
        "causeline change list --from now-1d --kind deploy",
    )
    ls.add_argument("--from", dest="start", type=parse_time, default=None)
    ls.add_argument("--to", dest="end", type=parse_time, default=None)
    ls.add_argument("--kind", choices=CHANGE_KINDS, default=None)
    ls.add_argument("--owner", choices=TEAMS, default=None)
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_common(ls)
    ls.set_defaults(func=list_cmd)


def add_cmd(args) -> int:
    """Register a change."""
    from correlator.store.changes import ChangeExists, add_change

    fields = {
        "id": args.id,
        "kind": args.kind,
        "owner": args.owner,
        "target": args.target,
        "summary": args.summary,
        "person": author_of(args),
        "scope": args.scope,
        "planned_ts": args.planned,
        "ts": args.at,
        "rollout_stage": args.stage,
        "canary_percent": args.canary_percent,
        "version": args.version,
        "labels": key_values(args.label, "--label"),
        "author": author_of(args),
    }
    try:
        with writing(args) as conn:
            got = add_change(
                conn=conn,
                change={k: v for k, v in fields.items() if v is not None},
                now=time.time(),
            )
    except ChangeExists as exc:
        raise CliError(f"a change with id {exc} exists") from exc
    show(got)
    return 0


def done_cmd(args) -> int:
    """Set the time a change happened."""
    from correlator.store.changes import update_change

    fields = {"ts": args.at if args.at is not None else time.time(), "author": author_of(args)}
    if args.stage:
        fields["rollout_stage"] = args.stage
    with writing(args) as conn:
        got = update_change(conn=conn, change_id=args.id, fields=fields)
    if got is None:
        raise CliError(f"no change {args.id}")
    show(got)
    return 0


def list_cmd(args) -> int:
    """Print the changes of a window."""
    from correlator.store.changes import query_changes

    with reading(args) as conn:
        rows = query_changes(
            conn=conn, start=args.start, end=args.end, kind=args.kind, owner=args.owner
        )
    if args.json:
        show(rows)
        return 0
    for c in rows:
        t = when(c["ts"]) if c["ts"] is not None else "planned " + when(c["planned_ts"])
        flag = " UNPLANNED" if c["unplanned"] else ""
        print(
            f"{t:22} {c['id']:14} {c['kind']:8} {c['owner']:5} {c['target']:28} "
            f"{c['summary']}{flag}"
        )
    if not rows:
        print("no changes in the window")
    return 0
