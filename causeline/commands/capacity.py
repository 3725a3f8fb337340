"""``causeline capacity plan``: replicas from the latency SLA and the peak QPS."""

from __future__ import annotations

from causeline.cli import CliError
from causeline.commands.common import subparser


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
    from correlator.incidents.capacity import PlanInput, plan

    for name in ("sla_ms", "latency_ms", "qps_per_replica", "peak_qps"):
        if getattr(args, name) <= 0:
            raise CliError(f"--{name.replace('_', '-')} must be positive")
    got = plan(
        PlanInput(
            sla_latency_ms=args.sla_ms,
            latency_per_request_ms=args.latency_ms,
            qps_per_replica=args.qps_per_replica,
            peak_qps=args.peak_qps,
            redundancy=args.redundancy,
            gpu=args.gpu,
        )
    )
    for line in got["steps"]:
        print(line)
    print(f"=> {got['replicas']} replicas, {got['replicas_with_redundancy']} with redundancy")
    return 0
