"""``causeline sla``: add, list, show and delete the SLAs the evaluator checks."""

from __future__ import annotations

from pathlib import Path

from causeline.commands.errors import CliError
from causeline.commands.options import parse_duration, subparser
from causeline.commands.records import (
    add_common,
    author_of,
    key_values,
    reading,
    show,
    when,
    writing,
)
from correlator.text import argument_problem, not_utf8, printable
from correlator.vocabulary import DEFAULT_SEVERITY, SEVERITIES

# check_sla names the stored field; the CLI names the flag that sets it.
FLAGS = {"'for_seconds'": "--for", "'description'": "--doc"}


def register(sub) -> None:
    """Add the sla subcommand and its actions."""
    p = subparser(
        sub,
        "sla",
        "SLAs: the thresholds the evaluator checks, each with its written document",
        "causeline sla list",
    )
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = subparser(
        acts,
        "add",
        "add an SLA (--replace to overwrite one of the same name)",
        "causeline sla add --name 'click_rank_v3 p99 latency' --metric model_latency_p99_ms "
        "--labels model=click_rank_v3 --op '>' --threshold 30 --for 2m --doc sla.md",
    )
    add.add_argument("--name", required=True)
    add.add_argument("--metric", required=True)
    add.add_argument(
        "--labels", nargs="+", action="extend", default=[], metavar="KEY=VALUE", help="selector"
    )
    add.add_argument("--aggregate", default="max", help="max, min, mean or sum (default max)")
    add.add_argument("--op", default=None, help="'>' or '<': breached when above or below")
    add.add_argument("--threshold", type=float, default=None)
    add.add_argument(
        "--for",
        dest="for_seconds",
        type=parse_duration,
        default=0.0,
        metavar="DURATION",
        help="how long the breach must last: seconds or 2m (default 0)",
    )
    add.add_argument("--severity", choices=SEVERITIES, default=DEFAULT_SEVERITY)
    add.add_argument("--doc", metavar="FILE", default=None, help="the SLA document (Markdown)")
    add.add_argument("--replace", action="store_true", help="overwrite an SLA of that name")
    add_common(add, author=True)
    add.set_defaults(func=add_cmd)
    ls = subparser(acts, "list", "list the SLAs as a table", "causeline sla list")
    add_common(ls)
    ls.set_defaults(func=list_cmd)
    sh = subparser(
        acts, "show", "print an SLA as JSON", "causeline sla show 'click_rank_v3 p99 latency'"
    )
    sh.add_argument("name")
    add_common(sh)
    sh.set_defaults(func=show_cmd)
    rm = subparser(
        acts,
        "delete",
        "delete an SLA (its incidents stay)",
        "causeline sla delete 'click_rank_v3 p99 latency'",
    )
    rm.add_argument("name")
    add_common(rm)
    rm.set_defaults(func=delete_cmd)


def _document(path: str | None) -> str:
    if path is None:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"--doc {path}: {exc}") from exc


def build_sla(args) -> dict:
    """Return the SLA the add options describe; raise CliError naming a bad field."""
    from correlator.bundle import BundleError, check_sla

    sla = {
        "name": args.name,
        "metric": args.metric,
        "labels": key_values(args.labels, "--labels"),
        "aggregate": args.aggregate,
        "op": args.op,
        "threshold": args.threshold,
        "for_seconds": args.for_seconds,
        "severity": args.severity,
        "description": _document(args.doc),
    }
    sla = {k: v for k, v in sla.items() if v is not None}
    for value, flag in ((args.name, "--name"), (args.metric, "--metric"), *_labels(args)):
        _check_argument(value, flag)
    try:
        check_sla(sla, "SLA")
    except BundleError as exc:
        message = exc.message
        for field, flag in FLAGS.items():
            message = message.replace(field, f"{field} ({flag})")
        raise CliError(message) from exc
    author = author_of(args)
    _check_argument(author, "--author")
    return sla | {"author": author}


def _check_name(name: str) -> None:
    """Raise CliError when NAME is not UTF-8 (a stored name with control characters is found)."""
    problem = not_utf8(name)
    if problem:
        raise CliError(f"NAME: {problem}")


def _labels(args) -> list[tuple[str, str]]:
    return [(pair, "--labels") for pair in args.labels]


def _check_argument(value: str, flag: str) -> None:
    """Raise CliError naming ``flag`` when its text is not UTF-8 or holds control characters."""
    problem = argument_problem(value)
    if problem:
        raise CliError(f"{flag}: {problem}")


def add_cmd(args) -> int:
    """Store an SLA and print it."""
    from correlator.store.slas import save_sla

    sla = build_sla(args)
    with writing(args) as conn:
        got = save_sla(conn=conn, sla=sla, replace=args.replace)
    if got is None:
        raise CliError(f"an SLA named {sla['name']!r} exists; give --replace to overwrite it")
    show(got)
    return 0


def condition(sla: dict) -> str:
    """Return the breach condition of an SLA in words."""
    if "op" not in sla:  # an imported incident's SLA: its breach time is declared
        start = sla.get("breach_start")
        return f"declared breach from {when(start)}" if start is not None else "declared breach"
    held = f" for {sla['for_seconds']:g}s" if sla.get("for_seconds") else ""
    return f"{sla['aggregate']} {sla['op']} {sla['threshold']:g}{held}"


def list_cmd(args) -> int:
    """Print the SLAs as a table."""
    from correlator.store.recordings import list_recordings
    from correlator.store.slas import list_slas

    with reading(args) as conn:
        rows = list_slas(conn=conn)
        declared: dict[str, float] = {}  # an imported incident's breach, by its SLA
        for window in list_recordings(conn=conn):
            if window.breach_start is not None:
                declared[window.sla] = max(declared.get(window.sla, 0.0), window.breach_start)
    rows = [{**s, "breach_start": s.get("breach_start") or declared.get(s["name"])} for s in rows]
    if not rows:
        print("no SLAs; add one with `causeline sla add`")
        return 0
    print(f"{'NAME':32} {'METRIC':28} {'LABELS':28} {'SEVERITY':8} CONDITION")
    for s in rows:  # stored text is printed escaped: a name must not drive the terminal
        labels = ",".join(f"{k}={v}" for k, v in sorted(s["labels"].items())) or "-"
        name, metric, labels = printable(s["name"]), printable(s["metric"]), printable(labels)
        severity = printable(s.get("severity", "-"))
        print(f"{name:32} {metric:28} {labels:28} {severity:8} {printable(condition(s))}")
    return 0


def show_cmd(args) -> int:
    """Print one SLA as JSON."""
    from correlator.store.slas import get_sla

    _check_name(args.name)
    with reading(args) as conn:
        got = get_sla(conn=conn, name=args.name)
    if got is None:
        raise CliError(f"no SLA named {args.name!r}; list them with `causeline sla list`")
    show(got)
    return 0


def delete_cmd(args) -> int:
    """Delete one SLA."""
    from correlator.store.slas import delete_sla

    _check_name(args.name)
    with writing(args) as conn:
        if not delete_sla(conn=conn, name=args.name):
            raise CliError(f"no SLA named {args.name!r}; list them with `causeline sla list`")
    print(f"deleted SLA {args.name!r}")
    return 0
