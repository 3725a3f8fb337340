"""``causeline capacity plan``: replicas from the latency SLA and the peak QPS."""

from __future__ import annotations

import math
from typing import Any

from causeline.commands.errors import CliError
from causeline.commands.options import subparser

# (option dest, PlanInput field, low, high, low included): the bounds the API holds (PlanIn).
FIGURES = (
    ("sla_ms", "sla_latency_ms", 0.0, 1e6, False),
    ("latency_ms", "latency_per_request_ms", 0.0, 1e6, False),
    ("qps_per_replica", "qps_per_replica", 0.0, 1e9, False),
    ("peak_qps", "peak_qps", 0.0, 1e9, False),
    ("redundancy", "redundancy", 0.0, 10.0, True),
)


def register(sub) -> None:
    """Add the capacity subcommand."""
    p = subparser(
        sub,
        "capacity",
        "capacity planning: replicas needed for a peak QPS within the latency SLA",
        "causeline capacity plan --sla-ms 30 --latency-ms 12 --qps-per-replica 40 --peak-qps 400",
    )
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    pl = subparser(
        acts,
        "plan",
        "print the replicas and the arithmetic",
        "causeline capacity plan --sla-ms 30 --latency-ms 12 --qps-per-replica 40 --peak-qps 400",
    )
    pl.add_argument("--sla-ms", type=float, required=True, help="latency SLA per request (ms)")
    pl.add_argument("--latency-ms", type=float, required=True, help="measured latency per request")
    pl.add_argument("--qps-per-replica", type=float, required=True, help="with dynamic batching")
    pl.add_argument("--peak-qps", type=float, required=True)
    pl.add_argument("--redundancy", type=float, default=0.2, help="fraction (default 0.2)")
    pl.add_argument("--gpu", default="")
    pl.set_defaults(func=plan_cmd)


def plan_cmd(args) -> int:
    """Print a capacity plan."""
    from causeline.commands.incident import checked_arguments
    from correlator.incidents.capacity import PlanError, PlanInput, plan

    figures: dict[str, Any] = {  # PlanInput field -> the number given
        field: checked_figure(args, dest, low, high, inc) for dest, field, low, high, inc in FIGURES
    }
    checked_arguments(args, names=("gpu",))
    if len(args.gpu) > 100:
        raise CliError(f"argument --gpu: at most 100 characters, got {len(args.gpu)}")
    try:
        got = plan(PlanInput(**figures, gpu=args.gpu))
    except PlanError as exc:
        dest = next(d for d, field, *_ in FIGURES if field == exc.field)
        raise CliError(f"--{dest.replace('_', '-')}: {exc}") from exc
    for line in got["steps"]:
        print(line)
    print(f"=> {got['replicas']} replicas, {got['replicas_with_redundancy']} with redundancy")
    return 0


def checked_figure(args, dest: str, low: float, high: float, low_included: bool) -> float:
    """Return the option's number; CliError naming it when it is not finite or out of bounds."""
    value = getattr(args, dest)
    flag = f"--{dest.replace('_', '-')}"
    least = f"{low:g} or more" if low_included else f"above {low:g}"
    if math.isnan(value):
        raise CliError(f"{flag} must be a number {least} and at most {high:g}, got {value}")
    if value < low or (value == low and not low_included):
        raise CliError(f"{flag} must be {least}, got {value:g}")
    if value > high:
        raise CliError(f"{flag} must be at most {high:g} (the API's bound), got {value:g}")
    return value
