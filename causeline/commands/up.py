"""``causeline up`` and ``causeline demo``: the service and the dashboard in one process."""

from __future__ import annotations

import contextlib
import secrets
import signal
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from causeline.commands.errors import CliError, ensure_schema, open_engine
from causeline.commands.options import (
    add_database_option,
    add_prometheus_option,
    parse_port,
    parse_positive,
    prometheus_settings,
    subparser,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine


def _add_server_options(p) -> None:
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=parse_port, default=8400, help="port (default 8400)")
    add_database_option(p)
    p.add_argument(
        "--user-header",
        default=None,
        help="trusted auth-proxy header naming the person, e.g. X-Forwarded-User "
        "(default: $CAUSELINE_DASHBOARD_USER_HEADER)",
    )
    add_prometheus_option(p)


def register(sub) -> None:
    """Add the up and demo subcommands."""
    p = subparser(
        sub,
        "up",
        "run the service and the dashboard together on one port",
        "causeline up --port 8400",
    )
    _add_server_options(p)
    p.set_defaults(func=run_up)
    d = subparser(
        sub,
        "demo",
        "load a generated demo incident (clearly labelled DEMO) and run `up`",
        "causeline demo",
    )
    _add_server_options(d)
    d.add_argument(
        "--hours", type=parse_positive, default=6.0, help="hours of demo data (default 6)"
    )
    d.set_defaults(func=run_demo)


def service_token(engine: Engine, label: str = "dashboard-up") -> tuple[str, str]:
    """Create a fresh write-scope token for the embedded dashboard; return (name, secret)."""
    from correlator.store.engine import write_transaction
    from correlator.store.tokens import create_token

    name = f"{label}-{int(time.time())}-{secrets.token_hex(3)}"
    with write_transaction(engine) as conn:
        return name, create_token(conn=conn, name=name, scope="write")


def local_url(host: str, port: int) -> str:
    """Return the URL this machine reaches a server bound to ``host`` at (wildcards: loopback)."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def build_app(
    *,
    database_url: str,
    host: str,
    port: int,
    user_header: str | None = None,
    prometheus: dict | None = None,
    extra: dict | None = None,
):
    """Return the FastAPI service with the Dash dashboard mounted at / and the token's name.

    ``prometheus`` and ``extra`` are further service settings (``ServiceSettings`` fields).
    """
    from a2wsgi import WSGIMiddleware
    from pydantic import SecretStr

    from correlator.api.app import create_app
    from correlator.settings import ServiceSettings
    from dashboard.app import create_dashboard
    from dashboard.settings import DashboardSettings

    engine = open_engine(database_url, schema=False)
    fields: dict[str, Any] = {"evaluator_enabled": True, "alert_worker_enabled": True}
    fields |= (prometheus or {}) | (extra or {})
    service = ServiceSettings(database_url=database_url, bind_host=host, bind_port=port, **fields)
    if service.action_secret is None:  # one process: a secret of its own (replicas: docs)
        service.action_secret = SecretStr(secrets.token_urlsafe(32))
    app = create_app(service, engine=engine)  # a bad mapping file fails here, before the token
    token_name, secret = service_token(engine)
    try:
        settings = DashboardSettings(
            api_url=local_url(host, port),
            api_token=secret,
            bind_host=host,
            read_auth=service.read_auth,
            allowed_hosts="*",  # the service's Host check already wraps the mounted dashboard
        )
        if user_header:
            settings.user_header = user_header
        dash_app = create_dashboard(settings)
    except BaseException:
        _revoke(database_url, token_name)
        raise
    # Inside create_app's gzip middleware. a2wsgi's middleware is an ASGI 3 app that the
    # annotation of Starlette's mount does not name.
    app.mount("/", WSGIMiddleware(dash_app.server))  # type: ignore[arg-type]
    app.state.dashboard_token = token_name
    return app


def board_url(base: str, model: str, start: float, end: float) -> str:
    """Return the link to the joint board for a model and window."""
    return f"{base}/board?" + urlencode({"model": model, "from": round(start), "to": round(end)})


def _serve(args, after_start=None) -> int:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)

    from correlator.settings import resolve_database_url

    url = resolve_database_url(args.database_url)
    ensure_schema(url)
    with _sigterm_exits():
        return _serve_app(args, url, after_start)


# Signals whose default action ends the process without running ``finally`` blocks.
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
# Those uvicorn does not handle itself while it serves (it handles SIGINT and SIGTERM).
_UNHANDLED_BY_UVICORN = (signal.SIGHUP, signal.SIGQUIT)


@contextlib.contextmanager
def _sigterm_exits():
    """Turn SIGTERM, SIGHUP and SIGQUIT into SystemExit, so ``finally`` blocks run on them.

    uvicorn handles SIGTERM while it serves, then raises it again against the handler it
    found; without this one that is the default, which ends the process before cleanup
    (the token's revoke). SIGHUP and SIGQUIT end it the same way unless handled.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum, _frame):
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, leave) for sig in _STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def _graceful_stop(server):
    """While ``server`` serves, let SIGHUP and SIGQUIT stop it as SIGTERM does, then exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def stop(signum, frame):
        caught.append(signum)
        server.handle_exit(signum, frame)

    previous = {sig: signal.signal(sig, stop) for sig in _UNHANDLED_BY_UVICORN}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if caught:
        raise SystemExit(128 + caught[0])


def _serve_app(args, url: str, after_start) -> int:
    from correlator.promsource import MappingError

    try:
        app = build_app(
            database_url=url,
            host=args.host,
            port=args.port,
            user_header=args.user_header,
            prometheus=prometheus_settings(args),
        )
    except MappingError as exc:
        raise CliError(str(exc)) from exc
    try:  # from here on, any exit (SIGTERM, Ctrl-C, an error, a normal stop) revokes the token
        return _run_server(args, app, after_start)
    finally:
        _revoke(url, app.state.dashboard_token)


def _run_server(args, app, after_start) -> int:
    import uvicorn

    from causeline.commands.serve import tune_process

    base = local_url(args.host, args.port)
    server = uvicorn.Server(
        uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    )

    def announce():
        while not server.started:
            if server.should_exit:
                return
            time.sleep(0.05)
        print(f"causeline is up: dashboard {base}/board · API {base}/docs", flush=True)
        if after_start:
            after_start(base)

    threading.Thread(target=announce, daemon=True).start()
    tune_process()  # the dashboard's figures and the API's reads share this process
    with _graceful_stop(server):
        server.run()
    return 0


def _revoke(url: str, name: str) -> None:
    from correlator.store.engine import write_transaction
    from correlator.store.tokens import revoke_token

    engine = open_engine(url, schema=False)
    try:
        with write_transaction(engine) as conn:
            revoke_token(conn=conn, name=name)
    finally:
        engine.dispose()


def run_up(args) -> int:
    """Serve the API and the dashboard until interrupted."""
    return _serve(args)


def load_demo(database_url: str, *, hours: float = 6.0, end: float | None = None) -> dict:
    """Store the demo incident; return its model, window and breach."""
    from causeline.demo import MODEL, SLA_NAME, breach_window, demo_bundle
    from correlator.store.bundles import import_bundle
    from correlator.store.tsdb import compact, roll_up

    bundle = demo_bundle(hours=hours, end=end)
    engine = open_engine(database_url, schema=False)
    try:
        import_bundle(engine=engine, bundle=bundle)
        # As a service that has run for a while would have: hours past the two-hour head in
        # compressed chunks, the rest rolled up for wide board windows.
        roll_up(engine=engine, max_hours=int(hours) + 1)
        compact(engine=engine, max_hours=int(hours) + 1)
    finally:
        engine.dispose()
    last = max(float(s.ts[-1]) for s in bundle.series)
    first = min(float(s.ts[0]) for s in bundle.series)
    b0, b1 = breach_window(last)
    return {"model": MODEL, "sla": SLA_NAME, "start": first, "end": last, "breach": (b0, b1)}


def seed_demo_registry(base: str, token: str, demo: dict) -> None:
    """Register the demo model, its card, two hosts' fingerprints and on-call rotations."""
    import httpx

    from causeline.demo import demo_card, demo_fingerprints, demo_rotations

    headers = {"Authorization": f"Bearer {token}"}
    model = demo["model"]
    author = {"author": "causeline demo"}
    calls = [
        (
            "POST",
            "/api/v1/models",
            {"name": model, "owner": "algo", "description": "[DEMO] generated demo model"} | author,
        ),
        ("PUT", f"/api/v1/models/{model}/versions/2.4.0/card", demo_card() | author),
        *[
            ("POST", "/api/v1/oncall/rotations", r | author)
            for r in demo_rotations(model, demo["end"])
        ],
    ] + [("POST", "/api/v1/fingerprints", fp) for fp in demo_fingerprints(demo["end"])]
    with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        for method, path, body in calls:  # a fingerprint, as the agent sends it, has no author
            try:
                http.request(method, path, json=body)
            except httpx.HTTPError:
                return


def open_demo_incident(base: str, token: str, demo: dict) -> int | None:
    """Ask the service to evaluate the SLA inside the breach; return the incident id if any."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"}
    at = demo["breach"][1] - 60
    try:
        r = httpx.post(f"{base}/api/v1/evaluate", params={"at": at}, headers=headers, timeout=120)
        opened = r.raise_for_status().json()["opened"]
        if opened:
            return int(opened[0])
        r = httpx.get(f"{base}/api/v1/incidents", headers=headers, timeout=30)
        incidents = r.raise_for_status().json()
    except (httpx.HTTPError, ValueError):
        return None
    return max((i["id"] for i in incidents if i.get("sla") == demo["sla"]), default=None)


def run_demo(args) -> int:
    """Load the demo incident, then serve and print where to look."""
    from correlator.settings import resolve_database_url

    url = resolve_database_url(args.database_url)
    ensure_schema(url)
    print("loading the DEMO incident (generated data: the long-input story) ...", flush=True)
    demo = load_demo(url, hours=args.hours)
    b0, b1 = demo["breach"]

    def after(base: str) -> None:
        engine = open_engine(url, schema=False)
        try:
            name, secret = service_token(engine, "demo-evaluate")
        finally:
            engine.dispose()
        try:
            seed_demo_registry(base, secret, demo)
            incident = open_demo_incident(base, secret, demo)
        finally:
            _revoke(url, name)
        print(
            f"DEMO board at the breach: {board_url(base, demo['model'], b0 - 3600, b1 + 900)}",
            flush=True,
        )
        if incident is not None:
            print(f"DEMO incident: {base}/incidents/{incident}", flush=True)

    return _serve(args, after_start=after)
