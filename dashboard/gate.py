"""What every dashboard request passes: the Host check, the read rule and security headers."""

from __future__ import annotations

import flask
from werkzeug.exceptions import RequestEntityTooLarge

from dashboard.client import ApiError
from dashboard.signin import COOKIE, login_url, plausible_token, register_signin

WILDCARDS = frozenset({"0.0.0.0", "::", ""})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
# Served without a sign-in (routes under the prefix, matched whole): the sign-in page,
# sign-out, and the routes that answer only with a code, style or icon file that holds no
# data (a 404 otherwise, never a page). Any other path, /loginx or /assets/ too, is a page.
OPEN_RULES = (
    "login",
    "logout",
    "_favicon.ico",
    "assets/<path:filename>",
    "_dash-component-suites/<string:package_name>/<path:fingerprinted_path>",
)
READER = "causeline_reader"  # flask.g attribute: the signed-in person's token
IMMUTABLE = "public, max-age=31536000, immutable"


def host_name(header: str) -> str:
    """Return the name part of a Host header value: no port, no IPv6 brackets, lower case."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    name, colon, port = value.rpartition(":")
    return name if colon and port.isdigit() and ":" not in name else value


def allowed_hosts(bind_host: str, extra: str | None) -> frozenset | None:
    """Return the Host names answered (loopback, the bind address, ``extra``); None: any."""
    names = {n.strip().lower() for n in (extra or "").split(",") if n.strip()}
    if "*" in names or (bind_host in WILDCARDS and not names):
        return None
    names |= LOOPBACK_NAMES
    if bind_host not in WILDCARDS:
        names.add(host_name(bind_host) if bind_host.startswith("[") else bind_host.lower())
    return frozenset(names)


def content_security_policy(script_hashes) -> str:
    """Return the CSP of every response: own scripts and hashed inline ones, no framing."""
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self' " + " ".join(script_hashes),
            "style-src 'self' 'unsafe-inline'",  # Dash and Plotly set inline styles
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def versioned(request: flask.Request, response: flask.Response, prefix: str) -> bool:
    """Tell whether a response is a file whose URL changes with its content.

    Dash fingerprints component-suite URLs (``name.v4_4_1m<mtime>.js``; it sets a one-year
    max-age on those) and adds ``?m=<mtime>`` to its assets; the async chunks Dash loads
    later (``plotly.min.js``) carry no version and keep Dash's ETag revalidation.
    """
    if response.status_code != 200:
        return False
    path = request.path
    if path.startswith(prefix + "_dash-component-suites/"):
        return response.cache_control.max_age == 31536000
    return path.startswith(prefix + "assets/") and bool(request.args.get("m"))


def reader_token() -> str | None:
    """Return the signed-in person's token for this request (None: the service's token)."""
    return flask.g.get(READER) if flask.has_app_context() else None


def install_gate(app, context) -> None:
    """Check Host and sign-in before, and add security headers after, every request."""
    server: flask.Flask = app.server
    settings = context.settings
    prefix = context.prefix
    allowed = allowed_hosts(settings.bind_host, settings.allowed_hosts)
    open_rules = frozenset(prefix + rule for rule in OPEN_RULES)
    # Dash callbacks send small JSON; a bigger body is refused before it is read.
    server.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    csp: list[str] = []
    register_signin(server, prefix=prefix, check_token=context.client.whoami)

    def signed_in(request: flask.Request) -> bool:
        if settings.user_header and (request.headers.get(settings.user_header) or "").strip():
            return True  # the trusted auth proxy has signed the person in
        secret = request.cookies.get(COOKIE) or ""
        if not plausible_token(secret):
            return False
        context.client.whoami(secret)  # every time: a revoked token stops at once
        flask.g.setdefault(READER, secret)
        return True

    @server.before_request
    def check():
        request = flask.request
        if allowed is not None and host_name(request.host) not in allowed:
            return flask.Response(
                f"unknown Host {request.host[:100]!r}: add it to CAUSELINE_DASHBOARD_ALLOWED_HOSTS",
                421,
                mimetype="text/plain",
            )
        rule = request.url_rule
        if not settings.reads_need_sign_in() or (rule is not None and rule.rule in open_rules):
            return None
        try:
            if signed_in(request):
                return None
        except ApiError as exc:
            if exc.status != 401:
                return flask.Response(
                    f"cannot check the sign-in: {exc.message}", 503, mimetype="text/plain"
                )
        page = request.method == "GET" and not request.path.startswith(prefix + "_")
        if page:
            return flask.redirect(login_url(prefix, request.full_path.rstrip("?")))
        return flask.Response("sign in first", 401, mimetype="text/plain")

    @server.errorhandler(RequestEntityTooLarge)
    def too_large(_exc):
        return flask.Response(
            f"request body over {settings.max_body_bytes} bytes, the limit "
            "(CAUSELINE_DASHBOARD_MAX_BODY_BYTES)",
            413,
            mimetype="text/plain",
        )

    @server.after_request
    def headers(response: flask.Response) -> flask.Response:
        if not csp:
            csp.append(content_security_policy(app.csp_hashes()))
        response.headers["Content-Security-Policy"] = csp[0]
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        if versioned(flask.request, response, prefix):
            response.headers["Cache-Control"] = IMMUTABLE
        return response
