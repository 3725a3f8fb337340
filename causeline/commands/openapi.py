"""``causeline openapi``: print the service's OpenAPI document (the API reference)."""

from __future__ import annotations

import sys

from causeline.commands.options import subparser


def register(sub) -> None:
    """Add the openapi subcommand."""
    p = subparser(
        sub,
        "openapi",
        "print the HTTP API's OpenAPI document",
        "causeline openapi --output docs/openapi.json",
    )
    p.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")
    p.set_defaults(func=run)


def openapi_text() -> str:
    """Return the OpenAPI document as stable, indented JSON."""
    import orjson

    from correlator.api.app import create_app
    from correlator.settings import ServiceSettings

    app = create_app(ServiceSettings(database_url="sqlite://"))
    options = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    return orjson.dumps(app.openapi(), option=options).decode() + "\n"


def run(args) -> int:
    """Write the document."""
    text = openapi_text()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0
