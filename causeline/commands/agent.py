"""``causeline agent``: collect GPU, host and model-side metrics and ship them."""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
import time

from causeline.commands.errors import CliError
from causeline.commands.options import subparser

log = logging.getLogger(__name__)
EXAMPLE = (
    "causeline agent --server http://causeline:8400 --token $TOKEN --interval 10s\n"
    "  causeline agent --remote-write-url http://victoria:8428/api/v1/write  # to your TSDB\n"
    "  causeline agent --once --print          # one reading of every source, no sending"
)


def register(sub) -> None:
    """Add the ``agent`` subcommand."""
    p = subparser(sub, "agent", "run the collector agent (one per host)", EXAMPLE)
    p.add_argument("--server", help="service URL (env CAUSELINE_AGENT_SERVER)")
    p.add_argument("--token", help="ingest token (env CAUSELINE_AGENT_TOKEN)")
    p.add_argument(
        "--remote-write-url",
        help="also (or only) send Prometheus remote write here (env "
        "CAUSELINE_AGENT_REMOTE_WRITE_URL; docs/agent.md)",
    )
    p.add_argument("--interval", help="sampling interval, e.g. 10s, 1s, 500ms (default 10s)")
    p.add_argument("--config", help="TOML or JSON settings file (env CAUSELINE_AGENT_CONFIG)")
    p.add_argument("--host", help="host label (default: this machine's host name)")
    p.add_argument("--sources", help="comma list of host,gpu,restarts,fingerprint")
    p.add_argument("--spool-dir", help="on-disk spool (default /var/lib/causeline/spool)")
    p.add_argument(
        "--metrics-port",
        type=int,
        help="port of the agent's own /metrics (default 9465; 0 disables)",
    )
    p.add_argument("--metrics-addr", help="address of /metrics (default 0.0.0.0)")
    p.add_argument("--once", action="store_true", help="take one reading and exit")
    p.add_argument(
        "--print",
        action="store_true",
        dest="print_",
        help="with --once: print the readings to stdout instead of sending them",
    )
    p.set_defaults(func=run)


def _config(args):
    from collector.config import ConfigError, load_config

    try:
        return load_config(
            file=args.config,
            overrides={
                "server": args.server,
                "token": args.token,
                "remote_write_url": args.remote_write_url,
                "interval": args.interval,
                "host": args.host,
                "sources": args.sources,
                "spool_dir": args.spool_dir,
                "metrics_port": args.metrics_port,
                "metrics_addr": args.metrics_addr,
            },
        )
    except ConfigError as exc:
        raise CliError(str(exc)) from exc


def _print_reading(reading, out=None) -> None:
    from collector.schema import format_series

    out = out or sys.stdout
    for s in sorted(reading.samples, key=lambda s: (s.name, sorted(s.labels.items()))):
        print(f"{format_series(s.name, s.labels)} {s.value!r}", file=out)
    for e in reading.events:
        print(
            json.dumps(
                {"event": e.kind, "id": e.id, "ts": e.ts, "summary": e.summary, "labels": e.labels}
            ),
            file=out,
        )


def _once_print(config) -> int:
    from collector.agent import Agent
    from collector.fingerprint import DEFAULT_PACKAGES, collect_fingerprint
    from collector.runtime import build_sources

    sources = build_sources(config, for_print=True)
    agent = Agent(sources, host=config.resolved_host(), interval=config.interval)
    agent.collect()  # rates and busy % need two readings
    time.sleep(min(1.0, config.interval))
    _print_reading(agent.collect())
    if "fingerprint" in config.sources:
        fp = collect_fingerprint(packages=config.fingerprint_packages or DEFAULT_PACKAGES)
        print(json.dumps({"fingerprint": fp}, sort_keys=True))
    for source in sources:
        source.close()
    return 0


def run(args) -> int:
    """Run the agent until SIGTERM/SIGINT, or once with ``--once``."""
    from collector.config import ConfigError
    from collector.exporter import serve_metrics
    from collector.runtime import build_agent

    config = _config(args)
    if args.print_ and not args.once:
        raise CliError("--print needs --once")
    try:
        if args.once and args.print_:
            return _once_print(config)
        agent = build_agent(config)
    except ConfigError as exc:
        raise CliError(str(exc)) from exc
    if args.once:
        agent.step()
        agent.flush()
        shipper = agent.shipper
        delivered = shipper is not None and shipper.drain(time.monotonic() + 30)
        print(
            f"{len(agent.latest.samples)} samples; "
            f"{'delivered' if delivered else 'spooled for later'}"
        )
        return 0 if delivered else 1
    server = None
    if config.metrics_port:
        server, _ = serve_metrics(
            lambda: agent.latest, port=config.metrics_port, addr=config.metrics_addr
        )
        log.info("agent /metrics on %s:%d", config.metrics_addr, config.metrics_port)
    stop = threading.Event()

    def _on_signal(signum, _frame):
        log.info("signal %d: flushing and stopping", signum)
        agent.stop()
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    log.info(
        "agent for host %s: %d source(s) every %gs -> %s",
        agent.host,
        len(agent.sources),
        agent.interval,
        " and ".join(u for u in (config.server, config.remote_write_url) if u),
    )
    agent.run()
    if server is not None:
        server.shutdown()
    return 0
