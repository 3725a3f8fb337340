"""``causeline serve``: the ingest and query service."""

from __future__ import annotations

from causeline.commands.common import add_database_option, subparser


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
    p.add_argument("--workers", type=int, default=1, help="worker processes (PostgreSQL only)")
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
    settings = ServiceSettings(database_url=url, bind_host=args.host)
    print(
        f"causeline service on http://{args.host}:{args.port} (database {_safe(url)})", flush=True
    )
    uvicorn.run(
        create_app(settings), host=args.host, port=args.port, log_level="warning", access_log=False
    )
    return 0


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
