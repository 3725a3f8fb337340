"""``causeline serve``: the ingest and query service."""

from __future__ import annotations

import gc
import os
import sys
from typing import TYPE_CHECKING

from causeline.commands.errors import CliError, ensure_schema
from causeline.commands.options import (
    add_database_option,
    add_prometheus_option,
    parse_port,
    parse_positive_count,
    prometheus_settings,
    settings_source,
    subparser,
)

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


APP_FACTORY = "causeline.commands.serve:worker_app"
# While another thread runs Python, a thread back from the database (SQLite: after every
# fetched row) waits up to this long for the GIL; Python's default is 5 ms. Why 50 us and
# what it buys: docs/architecture.md, "Concurrency" (benchmarks/read_contention.py).
SWITCH_INTERVAL = 0.00005
# New container objects between two collections of the youngest generation (Python: 700).
# An agent's batch of one point for each of 10,000 series is about 50,000 short-lived dicts
# and lists: at 700 each request survived some 70 collections into the oldest generation
# and set off a full collection (tens of ms) nearly every request. docs/architecture.md.
GC_YOUNG_OBJECTS = 100_000


def register(sub) -> None:
    """Add the serve subcommand."""
    p = subparser(
        sub,
        "serve",
        "run the HTTP service (ingest, queries, analysis)",
        "causeline serve --host 127.0.0.1 --port 8400",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=parse_port, default=8400, help="port (default 8400)")
    add_database_option(p)
    p.add_argument(
        "--workers",
        type=parse_positive_count,
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
    add_prometheus_option(p)
    p.set_defaults(func=run)


def run(args) -> int:
    """Upgrade an embedded database if needed, then serve until interrupted."""
    import uvicorn

    from correlator.api.app import create_app
    from correlator.settings import ServiceSettings, resolve_database_url

    url = resolve_database_url(args.database_url)
    ensure_schema(url)
    settings = ServiceSettings(
        database_url=url,
        bind_host=args.host,
        bind_port=args.port,
        evaluator_enabled=not args.no_evaluator,
        alert_worker_enabled=not args.no_alerts,
        **prometheus_settings(args),
    )
    source = settings_source(settings)  # fails early on a bad mapping file
    print(
        f"causeline service on http://{args.host}:{args.port} (database {_safe(url)})", flush=True
    )
    options = {"host": args.host, "port": args.port, "log_level": "warning", "access_log": False}
    if args.workers > 1:
        if url.startswith("sqlite"):
            raise CliError("--workers > 1 needs PostgreSQL: SQLite allows one writer at a time")
        # uvicorn's factory takes no arguments: each worker process rebuilds these settings
        # (and from them its own metric source) from the CAUSELINE_* variables it inherits.
        os.environ.update(worker_environment(settings))
        if source is not None:
            source.close()
        uvicorn.run(APP_FACTORY, factory=True, workers=args.workers, **options)
    else:
        app = create_app(settings, source=source)
        tune_process()
        uvicorn.run(app, **options)
    return 0


def tune_process() -> None:
    """Keep startup's objects and requests' short-lived ones out of collections; GIL sooner."""
    gc.freeze()  # it lives as long as the process
    gc.set_threshold(GC_YOUNG_OBJECTS, *gc.get_threshold()[1:])
    sys.setswitchinterval(SWITCH_INTERVAL)


def worker_app():
    """Return the app of one worker process (uvicorn's factory), its process tuned."""
    from correlator.api.app import create_app

    app = create_app()  # settings from the CAUSELINE_* variables serve exported
    tune_process()
    return app


def worker_environment(settings: ServiceSettings) -> dict[str, str]:
    """Return the CAUSELINE_* variables from which a worker process rebuilds the settings."""
    return {
        f"CAUSELINE_{name.upper()}": str(value)
        for name, value in settings.model_dump().items()
        if value is not None
    }


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
