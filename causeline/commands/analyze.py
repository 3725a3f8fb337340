"""``causeline analyze``: rank what came before an SLA breach in an incident bundle."""

from __future__ import annotations

import sys

import orjson

from causeline.commands.common import parse_time, subparser


def register(sub) -> None:
    """Add the ``analyze`` subcommand."""
    p = subparser(
        sub,
        "analyze",
        "rank the anomalies and changes that came before an SLA breach",
        "causeline analyze ../shared/scenarios/public/01-input-length-drift --format text",
    )
    p.add_argument(
        "bundle", metavar="BUNDLE_DIR", nargs="?", help="incident bundle folder (FORMAT.md)"
    )
    p.add_argument("--format", choices=("json", "text"), default="json", help="output form")
    p.add_argument(
        "--at",
        type=parse_time,
        default=None,
        help="analyse the breach ongoing at this time (unix seconds or ISO 8601)",
    )
    p.add_argument("--top", type=int, default=20, help="how many suspects to list")
    p.set_defaults(func=run)


def run(args) -> int:
    """Read the bundle, analyse it and print the result."""
    from causeline.cli import CliError
    from correlator.analysis import AnalysisError, Config, analyze
    from correlator.analysis.render import render_text
    from correlator.bundle import BundleError, read_bundle

    if not args.bundle:
        raise CliError("give BUNDLE_DIR, an incident bundle folder")
    try:
        bundle = read_bundle(args.bundle)
        result = analyze(bundle, at=args.at, config=Config(top=max(1, args.top)))
    except (BundleError, AnalysisError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    if args.format == "text":
        sys.stdout.write(render_text(result, top=args.top))
    else:
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0
