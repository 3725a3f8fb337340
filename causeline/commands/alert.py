"""``causeline alert``: check the alert routes, send a test message, look at the outbox."""

from __future__ import annotations

import time
from dataclasses import replace

from causeline.commands.errors import CliError, open_engine
from causeline.commands.options import add_database_option, parse_positive_count, subparser
from correlator.records.incident import IncidentRecord

# A whole incident record, so the test message goes through what a real one does.
TEST_INCIDENT = IncidentRecord(
    id=0,
    sla="causeline test alert",
    status="open",
    severity="info",
    breach_start=0.0,
    breach_end=None,
    opened_at=0.0,
    acknowledged_at=None,
    acknowledged_by=None,
    assignee=None,
    escalations=0,
    escalated_at=None,
    snoozed_until=None,
    resolved_at=None,
    top_suspect=None,
    resolved_by=None,
    opened_by=None,
    reranked_at=None,
    headline=None,
    scope={"kind": "global", "labels": {}},
    confidence=None,
    confidence_says=None,
    suspects=[
        {
            "rank": 1,
            "kind": "series",
            "metric": "model_input_length_bucket",
            "labels": {"instance": "i-3"},
            "owner": "algo",
            "lead_seconds": 240,
            "evidence": "this is a test message from `causeline alert test`",
        }
    ],
    changes=[],
    chain=[],
    oncall={"algo": None, "infra": None},
    analysis_error=None,
    runbook=None,
    imported=None,
    notes=[],
)


def register(sub) -> None:
    """Add the alert subcommand group."""
    p = subparser(
        sub, "alert", "alert channels, routes and outbox", "causeline alert test algo-slack"
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    channels = subparser(
        actions,
        "channels",
        "check the routes file and list its channels (secrets masked)",
        "causeline alert channels --routes alerts.yaml",
    )
    channels.add_argument("--routes", help="routes file (default: $CAUSELINE_ALERT_ROUTES_FILE)")
    channels.set_defaults(func=channels_cmd)
    test = subparser(
        actions,
        "test",
        "send a test message to one channel now (not through the outbox)",
        "causeline alert test algo-slack --routes alerts.yaml",
    )
    test.add_argument("channel")
    test.add_argument("--routes", help="routes file (default: $CAUSELINE_ALERT_ROUTES_FILE)")
    test.set_defaults(func=test_cmd)
    outbox = subparser(
        actions,
        "outbox",
        "list outbox rows, newest first",
        "causeline alert outbox --status failed",
    )
    outbox.add_argument(
        "--status", choices=["pending", "sending", "sent", "failed", "silenced", "stale"]
    )
    outbox.add_argument("--limit", type=parse_positive_count, default=50)
    add_database_option(outbox)
    outbox.set_defaults(func=outbox_cmd)


def _config(routes: str | None):
    from correlator.alerts.routing import load_config
    from correlator.settings import ServiceSettings

    settings = ServiceSettings(alert_routes_file=routes) if routes else ServiceSettings()
    try:
        return settings, load_config(settings)
    except (OSError, ValueError) as exc:
        raise CliError(f"alert routes: {exc}") from exc


def channels_cmd(args) -> int:
    """Print each channel with its URL masked, then the routes."""
    from correlator.alerts.masking import mask_url

    _, config = _config(args.routes)
    if not config.channels:
        raise CliError("no channels: set CAUSELINE_ALERT_ROUTES_FILE or pass --routes")
    for c in config.channels.values():
        signed = "signed" if c.secret else "unsigned"
        print(f"{c.name}\t{c.kind}\t{mask_url(c.url)}\t{signed}\t{c.rate_per_minute}/min")
    for r in config.routes:
        cond = {"model": r.models, "sla": r.slas, "team": r.teams}
        when = " ".join(f"{k}={','.join(v)}" for k, v in cond.items() if v) or "any"
        print(f"route {when} severity>={r.min_severity} -> {', '.join(r.channels)}")
    print(f"default -> {', '.join(config.default) or '(none)'}")
    return 0


def test_cmd(args) -> int:
    """Render a test incident for one channel and post it; print the platform's answer."""
    from correlator.alerts.formats import alert_format
    from correlator.alerts.masking import channel_secrets, scrub_cut
    from correlator.alerts.messages import build_message
    from correlator.alerts.transport import HttpTransport
    from correlator.alerts.worker import MAX_ERROR

    settings, config = _config(args.routes)
    channel = config.channels.get(args.channel)
    if channel is None:
        raise CliError(f"no channel {args.channel!r}; see `causeline alert channels`")
    now = time.time()
    incident: IncidentRecord = {**TEST_INCIDENT, "breach_start": now - 60}
    message = build_message(incident, "opened", sla=None, public_url=settings.public_url, now=now)
    # Said as a test in its first words: a reader must not take it for an SLA breach.
    message = replace(message, title=f"[TEST] causeline alert test to {channel.name}: no incident")
    fmt = alert_format(channel.kind)
    transport = HttpTransport(settings.alert_http_timeout_seconds, settings=settings)
    secrets = channel_secrets(channel.url, channel.secret, channel.headers)
    try:
        status, text = transport.post(
            fmt.request(fmt.render(message), channel, now=now, delivery_id="causeline-test")
        )
    except Exception as exc:
        raise CliError(scrub_cut(f"{type(exc).__name__}: {exc}", MAX_ERROR, *secrets)) from exc
    finally:
        transport.close()
    error = fmt.error(status, scrub_cut(text, len(text), *secrets))  # scrubbed before any cut
    if error:
        raise CliError(scrub_cut(error, MAX_ERROR, *secrets))
    print(f"sent to {channel.name} ({channel.kind}): HTTP {status}")
    return 0


def outbox_cmd(args) -> int:
    """Print outbox rows."""
    from correlator.alerts.outbox import list_outbox

    engine = open_engine(args.database_url)
    try:
        with engine.connect() as conn:
            rows = list_outbox(conn=conn, status=args.status, limit=args.limit)
    finally:
        engine.dispose()
    for r in rows:
        print(
            f"{r['id']}\tincident {r['incident_id']}\t{r['event']}\t{r['channel']}\t"
            f"{r['status']}\tattempts {r['attempts']}\t{r['last_error']}"
        )
    return 0
