"""``causeline analyze``: rank what came before an SLA breach, from a bundle or the store."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from causeline.commands.errors import CliError, open_engine
from causeline.commands.options import (
    add_database_option,
    parse_positive,
    parse_positive_count,
    parse_time,
    subparser,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine


def register(sub) -> None:
    """Add the ``analyze`` subcommand."""
    p = subparser(
        sub,
        "analyze",
        "rank the anomalies and changes that came before an SLA breach",
        "causeline analyze ../shared/scenarios/public/01-input-length-drift --format text\n"
        "  causeline analyze --sla 'click_rank_v3 p99 latency' --at 2024-12-02T09:25Z\n"
        "  causeline analyze --prometheus http://prometheus:9090 --sla-file sla.json "
        "--at 1733131500",
    )
    p.add_argument(
        "bundle", metavar="BUNDLE_DIR", nargs="?", help="incident bundle folder (FORMAT.md)"
    )
    p.add_argument("--format", choices=("json", "text"), default="json", help="output form")
    p.add_argument(
        "--at",
        type=parse_time,
        default=None,
        help="analyse the breach ongoing at this time (unix seconds or ISO 8601); "
        "with --sla and no --at: the latest breach in the stored data",
    )
    p.add_argument("--top", type=parse_positive_count, default=20, help="how many suspects to list")
    p.add_argument("--sla", default=None, help="analyse this stored SLA from the store's data")
    add_prometheus_options(p)
    p.add_argument(
        "--before",
        type=parse_positive,
        default=4 * 3600.0,
        help="with --prometheus: seconds of history before --at to read (default 4 h)",
    )
    add_database_option(p)
    p.set_defaults(func=run)


def add_prometheus_options(p) -> None:
    """Add --prometheus, --mapping, --step, --sla-file and --topology."""
    p.add_argument(
        "--prometheus",
        metavar="URL",
        default=None,
        help="read metrics from this Prometheus-compatible server (docs/prometheus.md)",
    )
    p.add_argument(
        "--mapping",
        metavar="FILE",
        default=None,
        help="with --prometheus: mapping YAML (default: the built-in mapping)",
    )
    p.add_argument(
        "--step",
        type=parse_positive,
        default=None,
        help="with --prometheus: query resolution, seconds",
    )
    p.add_argument("--sla-file", default=None, help="SLA as JSON (FORMAT.md); no store needed")
    p.add_argument(
        "--topology",
        metavar="FILE",
        default=None,
        help="topology JSON (default: the store's, else empty)",
    )


def prometheus_inputs(args, engine: Engine):
    """Return (source, sla, topology) for a --prometheus run; raise CliError on bad input."""
    import json
    from pathlib import Path

    from correlator.bundle import check_sla
    from correlator.promsource import MappingError, make_source

    if bool(args.sla) == bool(args.sla_file):
        raise CliError("with --prometheus give either --sla NAME (a stored SLA) or --sla-file F")
    try:
        source = make_source(args.prometheus, args.mapping, step=args.step)
    except MappingError as exc:
        raise CliError(str(exc)) from exc
    sla: dict | None
    if args.sla_file:
        try:
            sla = check_sla(json.loads(Path(args.sla_file).read_text()), args.sla_file)
        except (OSError, ValueError) as exc:
            raise CliError(f"{args.sla_file}: {exc}") from exc
    else:
        if engine is None:
            raise CliError(f"no store to read SLA {args.sla!r} from; give --sla-file F")
        from correlator.store.slas import get_sla

        with engine.connect() as conn:
            sla = get_sla(conn=conn, name=args.sla)
        if sla is None:
            raise CliError(f"no SLA named {args.sla!r} in the store; see `causeline sla list`")
    topology = None
    if args.topology:
        try:
            topology = json.loads(Path(args.topology).read_text())
        except (OSError, ValueError) as exc:
            raise CliError(f"{args.topology}: {exc}") from exc
    return source, sla, topology


def run(args) -> int:
    """Read the bundle, analyse it and print the result."""
    import orjson

    from correlator.analysis import AnalysisError, Config, analyze
    from correlator.analysis.render import render_text
    from correlator.bundle import BundleError, read_bundle
    from correlator.promsource import PromSourceError

    if args.prometheus:
        if args.bundle:
            raise CliError("give either BUNDLE_DIR or --prometheus URL, not both")
    elif args.sla_file:
        raise CliError("--sla-file goes with --prometheus URL")
    elif bool(args.bundle) == bool(args.sla):
        raise CliError("give either BUNDLE_DIR (an incident bundle folder) or --sla NAME")
    try:
        if args.prometheus:
            result = _from_prometheus(args)
        elif args.sla:
            result = _from_store(args)
        else:
            bundle = read_bundle(args.bundle)
            result = analyze(bundle, at=args.at, config=Config(top=max(1, args.top)))
    except (BundleError, AnalysisError, PromSourceError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    if args.format == "text":
        text = render_text(result, top=args.top)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


def _from_store(args) -> dict:
    """Analyse a stored SLA on the stored data around ``--at`` (default: the newest data)."""
    from causeline.commands.options import metric_source
    from correlator.incidents.snapshot import analyze_stored

    engine = open_engine(args.database_url)
    try:
        source = metric_source(args)  # $CAUSELINE_PROMETHEUS_URL, read here only
        try:
            result = analyze_stored(engine, args.sla, args.at, source=source)
        finally:
            if source is not None:
                source.close()
    finally:
        engine.dispose()
    if result is None:
        raise CliError(f"no SLA named {args.sla!r}; list them with `causeline sla list`")
    _say_window(result)
    return result


def _say_window(result: dict) -> None:
    """Tell on stderr which breach and which stored window the analysis took."""
    from correlator.analysis.render import when

    w = result.get("window") or {}
    how = {
        "declared": "the latest declared breach",
        "threshold": "the latest threshold breach in the stored data",
    }.get(str(w.get("breach")), "the breach at --at")
    where = f"imported incident {w['recording']}" if w.get("recording") else "the stored data"
    base = ", with its baseline" if w.get("baseline") else ""
    print(
        f"analysed {how} ({when(result.get('breach_start'))}) on {where} "
        f"from {when(w.get('start'))} to {when(w.get('end'))}{base}",
        file=sys.stderr,
    )


def _from_prometheus(args) -> dict:
    """Analyse the window before ``--at`` (default: now) with metrics read from Prometheus."""
    import time

    from correlator.analysis import Config, analyze
    from correlator.promsource.window import prometheus_bundle

    now = time.time()
    anchor = args.at if args.at is not None else now
    engine = open_engine(args.database_url, if_present=True)
    try:
        source, sla, topology = prometheus_inputs(args, engine)
        bundle = prometheus_bundle(
            source,
            sla,
            start=anchor - max(60.0, args.before),
            end=min(now, anchor + AFTER_S),
            engine=engine,
            topology=topology,
        )
    finally:
        if engine is not None:
            engine.dispose()
    return analyze(bundle, at=args.at, config=Config(top=max(1, args.top)))


AFTER_S = 15 * 60.0
