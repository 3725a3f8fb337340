"""``causeline incident``: list, show, annotate, resolve, export and evaluate incidents."""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from causeline.commands.errors import CliError, open_engine
from causeline.commands.options import (
    add_prometheus_option,
    parse_time,
    service_settings,
    subparser,
)
from causeline.commands.records import (
    add_common,
    author_of,
    reading,
    show,
    when,
    writing,
)
from correlator.text import argument_problem, printable

if TYPE_CHECKING:
    from correlator.records.incident import IncidentRecord


def register(sub) -> None:
    """Add the incident subcommand and its actions."""
    p = subparser(
        sub,
        "incident",
        "incidents opened by SLA breaches: list, show, note, resolve, export a review",
        "causeline incident export 3 -o incident-3.md",
    )
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = subparser(
        acts, "list", "list incidents, open first", "causeline incident list --status open"
    )
    ls.add_argument("--status", choices=("open", "resolved"), default=None)
    add_common(ls)
    ls.set_defaults(func=list_cmd)
    for name, func, text, example in (
        ("show", show_cmd, "print an incident as JSON", "causeline incident show 3"),
        (
            "export",
            export_cmd,
            "write the post-incident review (Markdown)",
            "causeline incident export 3 -o incident-3.md",
        ),
        (
            "resolve",
            resolve_cmd,
            "resolve an incident by hand",
            'causeline incident resolve 3 --text "rolled back to 3.2.1"',
        ),
        (
            "ack",
            ack_cmd,
            "acknowledge an open incident: you are on it",
            'causeline incident ack 3 --text "looking at the GPU hosts"',
        ),
        (
            "escalate",
            escalate_cmd,
            "escalate an open incident to the next on call of its owning team",
            'causeline incident escalate 3 --text "no answer from the primary"',
        ),
        (
            "assign",
            assign_cmd,
            "give an open incident to someone",
            'causeline incident assign 3 li.wei --text "GPU host, yours"',
        ),
        (
            "snooze",
            snooze_cmd,
            "hold an open incident's escalation and repeated messages for a while",
            "causeline incident snooze 3 --minutes 30",
        ),
    ):
        a = subparser(acts, name, text, example)
        a.add_argument("id", type=int)
        if name == "export":
            a.add_argument("-o", "--output", default=None, help="file (default: stdout)")
        if name == "assign":
            a.add_argument("person", help="whom the incident goes to")
        if name == "snooze":
            a.add_argument("--minutes", type=_minutes, default=60.0, help="how long (default: 60)")
        acts_on = name in ("resolve", "ack", "escalate", "assign", "snooze")
        if acts_on:
            a.add_argument("--text", default=None, help="why, written as a note")
        add_common(a, author=acts_on)
        a.set_defaults(func=func)
    note = subparser(
        acts,
        "note",
        "add a timestamped note",
        'causeline incident note 3 "canary at 5%, latency up on m-0 only" --team algo',
    )
    note.add_argument("id", type=int)
    note.add_argument("text")
    note.add_argument("--team", choices=("algo", "infra", "other"), default="other")
    add_common(note, author=True)
    note.set_defaults(func=note_cmd)
    ev = subparser(
        acts,
        "evaluate",
        "check every SLA once and open/resolve incidents",
        "causeline incident evaluate --at now-5m",
    )
    ev.add_argument("--at", type=parse_time, default=None, help="as of this time (default: now)")
    add_common(ev)
    add_prometheus_option(ev)
    ev.set_defaults(func=evaluate_cmd)


def _get(args) -> IncidentRecord:
    from correlator.store.incidents import get_incident

    with reading(args) as conn:
        got = get_incident(conn=conn, incident_id=args.id)
    if got is None:
        raise CliError(f"no incident {args.id}")
    return got


def _suspect_words(top: dict) -> str:
    """Return a top suspect as `metric{where}`: its metric and the labels that say where."""
    if not top:
        return "-"
    if top.get("kind") == "change" or not top.get("metric"):
        return str(top.get("id") or "-")
    labels = top.get("labels") or {}
    where = ",".join(f"{k}={labels[k]}" for k in WHERE_LABELS if labels.get(k))
    return f"{top['metric']}{{{where}}}" if where else str(top["metric"])


WHERE_LABELS = ("service", "model", "instance", "host", "gpu", "pod")  # in this order


def list_cmd(args) -> int:
    """Print incident summaries."""
    from correlator.store.incidents import list_incidents

    with reading(args) as conn:
        rows = list_incidents(conn=conn, status=args.status)
    for r in rows:  # stored text is printed escaped: a name must not drive the terminal
        what = printable(_suspect_words(r["top_suspect"] or {}))
        status, sla = printable(r["status"]), printable(r["sla"])
        print(f"{r['id']:>4} {status:8} {when(r['breach_start']):17} {sla:40} top: {what}")
    if not rows:
        print("no incidents")
    return 0


def show_cmd(args) -> int:
    """Print one incident."""
    show(_get(args))
    return 0


def export_cmd(args) -> int:
    """Write the Markdown review."""
    from correlator.incidents.review import render_review

    text = render_review(_get(args))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    return 0


def checked_arguments(args, free: tuple[str, ...] = (), names: tuple[str, ...] = ()) -> None:
    """Raise CliError naming the first argument not UTF-8 or holding refused control characters.

    ``free`` names free-text arguments (tab and newline allowed), ``names`` the rest.
    """
    for dest, is_free in [*((d, True) for d in free), *((d, False) for d in names)]:
        value = getattr(args, dest, None)
        problem = argument_problem(value, free=is_free) if isinstance(value, str) else None
        if problem:
            flag = dest.upper() if dest == "text" and args.action == "note" else f"--{dest}"
            raise CliError(f"argument {flag}: {problem}")


def note_cmd(args) -> int:
    """Add a note."""
    from correlator.store.incidents import add_note

    checked_arguments(args, free=("text",), names=("author",))
    with writing(args) as conn:
        got = add_note(
            conn=conn,
            incident_id=args.id,
            author=author_of(args),
            team=args.team,
            text=args.text,
            now=time.time(),
        )
    if got is None:
        raise CliError(f"no incident {args.id}")
    show(got)
    return 0


def ack_cmd(args) -> int:
    """Acknowledge an open incident, as the API does: on it and on its timeline, once."""
    from correlator.incidents.announce import acknowledge_and_announce

    return _act(args, acknowledge_and_announce, "acknowledged")


def _minutes(text: str) -> float:
    """Parse a snooze length: minutes above 0, at most a week."""
    from correlator.api.schemas.incidents import MAX_SNOOZE_MINUTES

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if not 0 < value <= MAX_SNOOZE_MINUTES:
        raise argparse.ArgumentTypeError(
            f"{text} minutes: give more than 0 and at most {MAX_SNOOZE_MINUTES} (a week)"
        )
    return value


def _act(args, action, done: str, **extra) -> int:
    """Run one incident action as the API does; print what was done or fail with why not."""
    from correlator.incidents.announce import Act

    by = author_of(args)
    with _announcing(args) as (conn, settings, source):
        act = Act(args.id, time.time(), by, settings, source, args.text)
        refused = action(conn=conn, act=act, **extra)
        if refused:
            raise CliError(refused)
    print(f"incident {args.id} {done} by {by}")
    return 0


def escalate_cmd(args) -> int:
    """Escalate an open incident to the next on call, as the API does."""
    from correlator.incidents.announce import escalate_and_announce

    return _act(args, escalate_and_announce, "escalated")


def assign_cmd(args) -> int:
    """Give an open incident to someone, as the API does."""
    from correlator.incidents.announce import assign_and_announce

    person = args.person.strip()
    if not person or len(person) > 200:
        raise CliError("person: give a name of 1 to 200 characters")
    return _act(args, assign_and_announce, f"assigned to {printable(person)}", person=person)


def snooze_cmd(args) -> int:
    """Hold an open incident's escalation and repeats, as the API does."""
    from correlator.incidents.announce import snooze_and_announce

    return _act(args, snooze_and_announce, f"snoozed {args.minutes:g} min", minutes=args.minutes)


def resolve_cmd(args) -> int:
    """Resolve an incident and queue its resolved message, as the API does."""
    from correlator.incidents.announce import Act, resolve_by_hand

    with _announcing(args) as (conn, settings, source):
        act = Act(args.id, time.time(), author_of(args), settings, source, args.text)
        refused = resolve_by_hand(conn=conn, act=act)
        if refused:
            raise CliError(refused)
    print(f"incident {args.id} resolved")
    return 0


@contextmanager
def _announcing(args):
    """Yield a write connection, the service's alert settings and its metric source."""
    checked_arguments(args, free=("text",), names=("author",))
    _get(args)
    settings, source = service_settings(args)
    try:
        with writing(args) as conn:
            yield conn, settings, source
    finally:
        if source is not None:
            source.close()


EVALUATED_NOTHING = 3  # exit status: another process holds the lease, or no SLA is stored


def evaluate_cmd(args) -> int:
    """Run one evaluation pass."""
    from correlator.incidents.evaluator import evaluate_once, holder_name

    settings, source = service_settings(args)
    engine = open_engine(args.database_url, named_file_must_exist=True)
    try:
        report = evaluate_once(
            engine, holder=holder_name(), now=args.at, settings=settings, source=source
        )
        show(report)
    finally:
        engine.dispose()
        if source is not None:
            source.close()
    if not report["held_lease"]:  # evaluated nothing: say why and how, exit non-zero
        at = int(report["at"]) if report.get("at") is not None else "UNIX_SECONDS"
        print(
            f"causeline incident evaluate: error: nothing evaluated: {report['reason']}, e.g.\n"
            "  curl -X POST -H 'Authorization: Bearer TOKEN' "
            f"'http://SERVICE:8400/api/v1/evaluate?at={at}'",
            file=sys.stderr,
        )
        return EVALUATED_NOTHING
    if not report["checked"]:
        print(f"causeline incident evaluate: error: {report['reason']}", file=sys.stderr)
        return EVALUATED_NOTHING
    if report.get("reason"):
        print(f"nothing opened or resolved: {report['reason']}", file=sys.stderr)
    return 0
