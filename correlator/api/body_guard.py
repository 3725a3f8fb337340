"""An ASGI guard that bounds JSON write bodies before any route parses them."""

from __future__ import annotations

import email.message
import json

from starlette.responses import JSONResponse

from correlator.api.body import MAX_JSON_DEPTH, json_depth, out_of_range
from correlator.text import dotted, first_bad_text, repair, text_problem

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Writes whose path may name what they create (PUT /api/v1/slas/{name}); a DELETE is
# left free, so that a name stored before the check can still be removed.
NAMING_METHODS = frozenset({"POST", "PUT", "PATCH"})
# Only the API's own routes: a dashboard mounted beside it (``causeline up``) sends its
# callback state, which may nest deeper, and is left to its own server.
API_PREFIX = "/api/"


def _is_json(headers: list[tuple[bytes, bytes]]) -> bool:
    """Say whether a route reads the body as JSON, as FastAPI decides.

    Any ``application/json`` or ``application/*+json`` in any case, or no Content-Type;
    Content-Encoding is not undone by the route, so it changes nothing here.
    """
    value = dict(headers).get(b"content-type")
    if not value:
        return True  # what is not JSON passes on to the route unchanged
    message = email.message.Message()
    message["content-type"] = value.decode("latin-1")
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def _error(status: int, path: list, msg: str) -> JSONResponse:
    path = [repair(p) for p in path]  # a key named in the answer may be the surrogate refused
    detail = [{"loc": ["body", *path], "field": dotted(path), "msg": msg, "type": "value_error"}]
    return JSONResponse({"detail": detail}, status_code=status)


def check_path(scope) -> JSONResponse | None:
    """Return the 422 for a write whose decoded path holds a control character."""
    if scope["method"] not in NAMING_METHODS:
        return None
    problem = text_problem(scope["path"])
    if problem is None:
        return None
    detail = [{"loc": ["path"], "field": "path", "msg": problem, "type": "value_error"}]
    return JSONResponse({"detail": detail}, status_code=422)


def check_json(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> JSONResponse | None:
    """Return the 422 for JSON text nested too deeply, out-of-range numbers or refused text."""
    if json_depth(raw) > max_depth:
        return _error(422, [], f"JSON nested deeper than {max_depth} levels")
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError:
        return None  # not JSON: the route answers as it always has
    except UnicodeDecodeError as exc:  # a compressed body too: routes undo no Content-Encoding
        return _error(422, [], f"not UTF-8 JSON text: {exc}")
    except ValueError as exc:  # an integer literal of thousands of digits
        return _error(422, [], f"number out of range: {exc}")
    found = out_of_range(doc) or first_bad_text(doc)
    return _error(422, found[0], found[1]) if found else None


class BodyGuard:
    """Refuse write bodies past ``max_bytes`` (413), bad JSON or text, or a bad path (422)."""

    def __init__(self, app, *, max_bytes: int, skip: frozenset[str] = frozenset()):
        self.app = app
        self.max_bytes = max_bytes
        self.skip = skip

    async def __call__(self, scope, receive, send):
        """Buffer a write body within the limit, check its JSON, then hand it on unchanged."""
        if (
            scope["type"] != "http"
            or scope["method"] not in WRITE_METHODS
            or not scope["path"].startswith(API_PREFIX)
            or scope["path"] in self.skip
        ):
            await self.app(scope, receive, send)
            return
        refusal = check_path(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                msg = f"body exceeds the limit of {self.max_bytes} bytes"
                await _error(413, [], msg)(scope, receive, send)
                return
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        refusal = check_json(raw) if raw and _is_json(scope["headers"]) else None
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        await self.app(scope, replay, send)
