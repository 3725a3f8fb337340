"""Assets kept brotli-compressed beside their source, sent as such to browsers that take br.

A copy is named ``<asset>.<first 16 hex of the asset's SHA-256>.br`` and used only while
its name matches the asset, so an updated asset is never answered with a stale copy (it
then goes out gzipped, as before). Make a copy with ``brotli -q 11 -w 24 -o NAME ASSET``.
"""

from __future__ import annotations

import hashlib
import mimetypes
from pathlib import Path

import flask

SUFFIX = ".br"
HASH_CHARS = 16


def digest(path: Path) -> str:
    """Return the hash a compressed copy of ``path`` carries in its name."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:HASH_CHARS]


def fresh_copies(folder: Path) -> dict[str, Path]:
    """Return the asset names (relative, '/'-separated) whose compressed copy matches them."""
    found = {}
    for copy in folder.rglob("*" + SUFFIX):
        source_name, _, tag = copy.name.removesuffix(SUFFIX).rpartition(".")
        source = copy.with_name(source_name)
        if source_name and source.is_file() and digest(source) == tag:
            found[source.relative_to(folder).as_posix()] = copy
    return found


def takes_brotli(accept_encoding: str) -> bool:
    """Return whether an Accept-Encoding header accepts br (and does not refuse it, q=0)."""
    for item in accept_encoding.split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() == "br":
            return params.replace(" ", "").lower() not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def install_precompressed(server: flask.Flask, folder: Path, prefix: str) -> dict[str, Path]:
    """Answer GETs of assets that have a fresh compressed copy with it, when br is taken."""
    copies = fresh_copies(folder)
    compressed = {name: copy.read_bytes() for name, copy in copies.items()}  # read once
    base = prefix + "assets/"

    @server.before_request
    def brotli_copy():
        request = flask.request
        name = request.path.removeprefix(base) if request.path.startswith(base) else None
        body = compressed.get(name) if request.method == "GET" else None
        if body is None or not takes_brotli(request.headers.get("Accept-Encoding", "")):
            return None
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        response = flask.Response(body, mimetype=kind)
        response.headers["Content-Encoding"] = "br"
        response.headers["Vary"] = "Accept-Encoding"
        return response

    return copies
