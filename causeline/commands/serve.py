"""``causeline serve``: the ingest and query service."""

from __future__ import annotations

import os

from causeline.cli import CliError
from causeline.commands.common import add_database_option, subparser

APP_FACTORY = "correlator.api.app:create_app"


def register(sub) -> None:
    """Add the serve subcommand."""
    p = subparser(
        sub,
        "serve",
        "run the HTTP service (ingest, queries, analysis)",
        "causeline serve --host 127.0.0.1 --port 8400",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8400, help="port (default 8400)")
    add_database_option(p)
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes (PostgreSQL; SQLite has one writer, so keep 1 there)",
    )
    p.add_argument(
        "--no-evaluator",
        action="store_true",
        help="do not check SLAs in the background (another process does)",
    )
    p.add_argument(
        "--no-alerts", action="store_true", help="do not send chat/Alertmanager messages"
    )
    p.set_defaults(func=run)


def run(args) -> int:
    """Upgrade an embedded database if needed, then serve until interrupted."""
    import uvicorn

    from causeline.commands.db import ensure_schema
    from correlator.api.app import create_app
    from correlator.settings import ServiceSettings
    from correlator.store.engine import resolve_database_url

    url = resolve_database_url(args.database_url)
    ensure_schema(url)
    settings = ServiceSettings(
        database_url=url,
        bind_host=args.host,
        evaluator_enabled=not args.no_evaluator,
        alert_worker_enabled=not args.no_alerts,
    )
    print(
        f"causeline service on http://{args.host}:{args.port} (database {_safe(url)})", flush=True
    )
    options = {"host": args.host, "port": args.port, "log_level": "warning", "access_log": False}
    if args.workers > 1:
        if url.startswith("sqlite"):
            raise CliError("--workers > 1 needs PostgreSQL: SQLite allows one writer at a time")
        # Each worker process builds its own app from the same settings, passed by environment.
        for name, value in settings.model_dump().items():
            if value is not None:
                os.environ[f"CAUSELINE_{name.upper()}"] = str(value)
        uvicorn.run(APP_FACTORY, factory=True, workers=args.workers, **options)
    else:
        uvicorn.run(create_app(settings), **options)
    return 0


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
