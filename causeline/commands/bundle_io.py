"""``causeline import`` and ``causeline export``: incident bundles in and out of the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from causeline.commands.errors import CliError, open_engine
from causeline.commands.options import (
    Progress,
    add_database_option,
    parse_positive_count,
    parse_time,
    subparser,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine


def register(sub) -> None:
    """Add the import and export subcommands."""
    imp = subparser(
        sub,
        "import",
        "load an incident bundle (metrics, changes, topology, SLA)",
        "causeline import ../shared/scenarios/public/01-input-length-drift",
    )
    imp.add_argument("bundle", help="bundle folder (see docs/bundles.md)")
    imp.add_argument(
        "--max-file-bytes",
        type=parse_positive_count,
        default=None,
        help="refuse a bundle file larger than this once inflated (default 512 MiB)",
    )
    add_database_option(imp)
    imp.set_defaults(func=import_cmd)
    exp = subparser(
        sub,
        "export",
        "write the stored data of a time window as a bundle",
        "causeline export ./incident-42 --from 2024-11-25T08:00Z --to 2024-11-25T10:00Z\n"
        "  causeline export ./incident-42 --from 1733120000 --to 1733132000 "
        "--prometheus http://prometheus:9090 --sla-file sla.json",
    )
    exp.add_argument("out", help="folder to write (created if missing)")
    exp.add_argument(
        "--from",
        dest="start",
        default=None,
        type=parse_time,
        help="window start: unix seconds or ISO 8601 (default: the newest imported incident's)",
    )
    exp.add_argument(
        "--to",
        dest="end",
        default=None,
        type=parse_time,
        help="window end: unix seconds or ISO 8601 (default: the newest imported incident's)",
    )
    exp.add_argument(
        "--sla", default=None, help="SLA to write as sla.json (needed when several are stored)"
    )
    from causeline.commands.analyze import add_prometheus_options

    add_prometheus_options(exp)
    add_database_option(exp)
    exp.set_defaults(func=export_cmd)


def import_cmd(args) -> int:
    """Validate the whole bundle, then store it in one transaction."""
    from correlator.analysis.render import when
    from correlator.bundle import MAX_FILE_BYTES, BundleError, read_bundle
    from correlator.store.bundles import import_bundle

    try:
        bundle = read_bundle(args.bundle, max_bytes=args.max_file_bytes or MAX_FILE_BYTES)
    except BundleError as exc:
        raise CliError(f"{exc}; nothing was imported") from exc
    engine = open_engine(args.database_url)
    try:
        summary = import_bundle(engine=engine, bundle=bundle, progress=Progress("importing"))
        breach = _breach_of(engine, bundle, summary.window)
    finally:
        engine.dispose()
    print(
        f"imported {args.bundle}: {summary.series} series, {summary.samples:,} samples "
        f"({summary.inserted:,} new), {summary.changes} changes, SLA {bundle.sla['name']!r}"
    )
    if summary.window is not None:
        declared = bundle.sla.get("breach_start")
        print(
            f"  incident window {when(summary.window[0])} to {when(summary.window[1])}"
            + (f", declared breach {when(declared)}" if declared is not None else "")
            + (
                f", baseline of {summary.baseline_series} series kept"
                if summary.baseline_series
                else ", no baseline"
            )
        )
    for what in summary.skipped:
        print(f"  skipped: {what}")
    if summary.window is not None:
        _print_next(args, bundle, summary.window, breach)
    return 0


def _breach_of(engine: Engine, bundle, window) -> float | None:
    """Return when the imported window's breach starts (declared, or found in its data)."""
    from correlator.incidents.history import latest_breach

    if window is None:
        return None
    sla = {**bundle.sla, "name": bundle.sla["name"]}
    past = latest_breach(engine, sla, end=window[1])
    return past.start if past is not None and past.start >= window[0] else None


def _print_next(args, bundle, window: tuple[float, float], breach: float | None) -> None:
    """Print what opens the imported incident and where its board is."""
    from correlator.alerts.messages import board_url
    from correlator.analysis.render import when

    model = (bundle.sla.get("labels") or {}).get("model") or bundle.sla.get("model") or ""
    url = board_url("http://127.0.0.1:8400", model=model, start=window[0], end=window[1])
    where = f" --database-url {args.database_url}" if args.database_url else ""
    if breach is None:
        print("  no breach found in its data: nothing to open (see `causeline analyze`)")
    else:
        at = breach + float(bundle.sla.get("for_seconds") or 0) + 60
        print(
            f"  breach from {when(breach)}; open its incident (ranked suspects, alerts):\n"
            f"    causeline incident evaluate --at {round(at)}{where}\n"
            "    (with the service running: POST /api/v1/evaluate?at="
            f"{round(at)} with a write token)"
        )
    print(f"  its board (with `causeline up` or `serve` on :8400): {url}")


def _write(out: str, bundle) -> None:
    """Write the bundle folder; a link or a file in the way is a one-line error."""
    from correlator.bundle import BundleError, write_bundle

    try:
        write_bundle(out, bundle)
    except BundleError as exc:
        raise CliError(str(exc)) from exc


def export_cmd(args) -> int:
    """Write the window's series, changes, topology and SLA as a bundle folder."""
    from correlator.store.bundles import ExportError, export_bundle, recorded_window

    if args.prometheus:
        if args.start is None or args.end is None:
            raise CliError("with --prometheus give the window with --from and --to")
        return _export_prometheus(args)
    if args.sla_file:
        raise CliError("--sla-file goes with --prometheus URL")
    if (args.start is None) != (args.end is None):
        raise CliError("give both --from and --to, or neither (the newest imported incident)")
    engine = open_engine(args.database_url)
    try:
        start, end = args.start, args.end
        if start is None:
            start, end = recorded_window(engine=engine, sla_name=args.sla)
        bundle = export_bundle(engine=engine, start=start, end=end, sla_name=args.sla)
    except ExportError as exc:
        raise CliError(str(exc)) from exc
    finally:
        engine.dispose()
    _write(args.out, bundle)
    print(
        f"wrote {args.out}: {len(bundle.series)} series, {bundle.extra['samples']:,} samples, "
        f"{len(bundle.changes)} changes, SLA {bundle.sla['name']!r}"
    )
    return 0


def _export_prometheus(args) -> int:
    """Write a bundle whose mapped metrics are read from Prometheus (the rest from the store)."""
    from causeline.commands.analyze import prometheus_inputs
    from correlator.promsource import PromSourceError
    from correlator.promsource.window import prometheus_bundle

    engine = open_engine(args.database_url, if_present=True)
    try:
        source, sla, topology = prometheus_inputs(args, engine)
        bundle = prometheus_bundle(
            source, sla, start=args.start, end=args.end, engine=engine, topology=topology
        )
    except (PromSourceError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    finally:
        if engine is not None:
            engine.dispose()
    _write(args.out, bundle)
    print(
        f"wrote {args.out}: {len(bundle.series)} series, {bundle.extra['samples']:,} samples "
        f"(from {args.prometheus}), {len(bundle.changes)} changes, SLA {bundle.sla['name']!r}"
    )
    return 0
