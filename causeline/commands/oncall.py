"""``causeline oncall``: who is on call now, and rotations and overrides."""

from __future__ import annotations

import time

from causeline.commands.errors import CliError
from causeline.commands.options import parse_time, subparser
from causeline.commands.records import add_common, author_of, reading, show, writing
from correlator.vocabulary import TEAMS


def register(sub) -> None:
    """Add the oncall subcommand and its actions."""
    p = subparser(
        sub,
        "oncall",
        "on-call rotation: who is the algorithm and infra contact now",
        "causeline oncall rotation algo-weekly --team algo --start 2024-11-25 li.wei zhang.min",
    )
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    now = subparser(
        acts,
        "now",
        "who is on call (for a model) now or at --at",
        "causeline oncall now --model click_rank_v3 --at now+8h",
    )
    now.add_argument("--model", default="")
    now.add_argument("--at", type=parse_time, default=None)
    add_common(now)
    now.set_defaults(func=now_cmd)
    rot = subparser(
        acts,
        "rotation",
        "add a rotation: week n is held by member n",
        "causeline oncall rotation algo-weekly --team algo --start 2024-11-25 "
        "li.wei=@li.wei zhang.min",
    )
    rot.add_argument("name")
    rot.add_argument("members", nargs="+", help="NAME or NAME=CONTACT")
    rot.add_argument("--team", required=True, choices=TEAMS)
    rot.add_argument("--model", default="", help="only for this model (default: all)")
    rot.add_argument("--start", type=parse_time, required=True, help="start of the first week")
    rot.add_argument("--period-days", type=float, default=7.0)
    add_common(rot, author=True)
    rot.set_defaults(func=rotation_cmd)
    ov = subparser(
        acts,
        "override",
        "put someone on call in place of the rotation",
        "causeline oncall override chen.jie --team infra --contact @chen.jie "
        '--from now --to now+2d --reason "swap"',
    )
    ov.add_argument("person")
    ov.add_argument("--team", required=True, choices=TEAMS)
    ov.add_argument("--model", default="")
    ov.add_argument("--contact", default="")
    ov.add_argument("--from", dest="start", type=parse_time, required=True)
    ov.add_argument("--to", dest="end", type=parse_time, required=True)
    ov.add_argument("--reason", default="")
    add_common(ov, author=True)
    ov.set_defaults(func=override_cmd)


def now_cmd(args) -> int:
    """Print who is on call."""
    from correlator.store.oncall import who_is_on_call

    with reading(args) as conn:
        got = who_is_on_call(conn=conn, model=args.model, at=args.at or time.time())
    for team in TEAMS:
        who = got[team]
        print(
            f"{team:5}: "
            + (f"{who['person']} {who['contact']} ({who['source']})" if who else "nobody")
        )
    return 0


def rotation_cmd(args) -> int:
    """Add a rotation."""
    from correlator.store.oncall import RotationExists, add_rotation

    members = []
    for m in args.members:
        name, _, contact = m.partition("=")
        members.append({"name": name, "contact": contact})
    rotation = {
        "name": args.name,
        "team": args.team,
        "model": args.model,
        "members": members,
        "start": args.start,
        "period_days": args.period_days,
        "author": author_of(args),
    }
    try:
        with writing(args) as conn:
            show(add_rotation(conn=conn, rotation=rotation))
    except RotationExists as exc:
        raise CliError(f"a rotation named {exc} exists") from exc
    return 0


def override_cmd(args) -> int:
    """Add an override."""
    from correlator.store.oncall import add_override

    if args.end <= args.start:
        raise CliError("--to must be after --from")
    override = {
        "team": args.team,
        "model": args.model,
        "person": args.person,
        "contact": args.contact,
        "start": args.start,
        "end": args.end,
        "reason": args.reason,
        "author": author_of(args),
    }
    with writing(args) as conn:
        show(add_override(conn=conn, override=override))
    return 0
