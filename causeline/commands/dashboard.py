"""``causeline dashboard``: the dashboard alone, talking to a service over HTTP."""

from __future__ import annotations

from causeline.commands.options import parse_port, subparser


def register(sub) -> None:
    """Add the dashboard subcommand."""
    p = subparser(
        sub,
        "dashboard",
        "serve the dashboard for a causeline service running elsewhere",
        "causeline dashboard --api-url http://causeline:8400 --host 0.0.0.0 --port 8050",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=parse_port, default=8050, help="port (default 8050)")
    p.add_argument(
        "--api-url",
        default=None,
        help="the service's URL (default: $CAUSELINE_DASHBOARD_API_URL or http://127.0.0.1:8400);"
        " its write token comes from $CAUSELINE_DASHBOARD_API_TOKEN",
    )
    p.add_argument(
        "--user-header",
        default=None,
        help="trusted auth-proxy header naming the person, e.g. X-Forwarded-User",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    """Serve the Dash app with uvicorn until interrupted."""
    import uvicorn
    from a2wsgi import WSGIMiddleware

    from dashboard.app import create_dashboard
    from dashboard.settings import DashboardSettings

    settings = DashboardSettings(bind_host=args.host)
    if args.api_url:
        settings.api_url = args.api_url
    if args.user_header:
        settings.user_header = args.user_header
    app = create_dashboard(settings)
    print(
        f"causeline dashboard on http://{args.host}:{args.port} (API {settings.api_url})",
        flush=True,
    )
    uvicorn.run(WSGIMiddleware(app.server), host=args.host, port=args.port, log_level="warning")
    return 0
