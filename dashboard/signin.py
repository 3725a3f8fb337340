"""The sign-in page: a reader token kept in an HttpOnly, SameSite=Strict cookie."""

from __future__ import annotations

from html import escape
from urllib.parse import urlencode, urlsplit

import flask

from dashboard.client import ApiError

COOKIE = "causeline_token"
MAX_TOKEN_CHARS = 512

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>causeline: sign in</title>
<link rel="stylesheet" href="{css}"></head>
<body><main class="signin"><h1>causeline</h1>
<p>This dashboard needs a token to show data (it is not bound to loopback, or
<code>read_auth</code> is <code>token</code>). Paste a token from
<code>causeline token create NAME</code>.</p>
<p class="error">{error}</p>
<form method="post" action="{action}">
<input type="hidden" name="next" value="{next}">
<label>Token <input type="password" name="token" autocomplete="off" required></label>
<button type="submit">Sign in</button>
</form></main></body></html>
"""

# A cross-site link does not carry a SameSite=Strict cookie; this same-site hop does.
BOUNCE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0; url={next}"><title>causeline</title></head>
<body><a href="{next}">continue</a></body></html>
"""


def plausible_token(secret: str) -> bool:
    """Return whether a string can be a token at all (short, printable ASCII, no spaces)."""
    return (
        0 < len(secret) <= MAX_TOKEN_CHARS
        and secret.isascii()
        and secret.isprintable()
        and (" " not in secret)
    )


def safe_next(value: str | None, prefix: str) -> str:
    """Return a local dashboard path to go to after signing in (never another site)."""
    value = (value or "").strip()
    parts = urlsplit(value)
    odd = "\\" in value or any(ord(c) < 33 for c in value)
    if parts.scheme or parts.netloc or odd or not value.startswith(prefix) or value[:2] == "//":
        return prefix + "board"
    return value


def login_url(prefix: str, target: str) -> str:
    """Return the sign-in page's URL that comes back to ``target``."""
    return f"{prefix}login?" + urlencode({"next": target})


def _page(prefix: str, target: str, error: str = "", status: int = 200) -> flask.Response:
    body = PAGE.format(
        css=escape(prefix + "assets/style.css"),
        error=escape(error),
        action=escape(prefix + "login"),
        next=escape(target),
    )
    return flask.Response(body, status=status, mimetype="text/html")


def _same_origin(request: flask.Request) -> bool:
    origin = request.headers.get("Origin")
    return origin is None or urlsplit(origin).netloc.lower() == request.host.lower()


def register_signin(server: flask.Flask, *, prefix: str, check_token) -> None:
    """Add the sign-in and sign-out routes; ``check_token(secret)`` returns a name or raises."""

    def login():
        request = flask.request
        target = safe_next(request.values.get("next"), prefix)
        if request.method == "GET":
            if request.headers.get("Sec-Fetch-Site") == "cross-site":
                body = BOUNCE.format(next=escape(target))
                return flask.Response(body, mimetype="text/html")
            return _page(prefix, target)
        if not _same_origin(request):
            return flask.Response("sign-in from another site refused", 403, mimetype="text/plain")
        secret = (request.form.get("token") or "").strip()
        if not plausible_token(secret):
            return _page(prefix, target, "Paste a token.", 401)
        try:
            check_token(secret)
        except ApiError as exc:
            if exc.status == 401:
                return _page(prefix, target, "Invalid or revoked token.", 401)
            return _page(prefix, target, f"Cannot check the token: {exc.message}", 503)
        response = flask.redirect(target, code=303)
        response.set_cookie(
            COOKIE,
            secret,
            httponly=True,
            samesite="Strict",
            secure=request.is_secure,
            path=prefix,
        )
        return response

    def logout():
        if not _same_origin(flask.request):
            return flask.Response("sign-out from another site refused", 403, mimetype="text/plain")
        response = flask.redirect(prefix + "login", code=303)
        response.delete_cookie(COOKIE, path=prefix, httponly=True, samesite="Strict")
        return response

    server.add_url_rule(f"{prefix}login", "causeline_login", login, methods=["GET", "POST"])
    server.add_url_rule(f"{prefix}logout", "causeline_logout", logout, methods=["POST"])
