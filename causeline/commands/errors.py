"""The error a command reports (CliError), and the one way a command opens its database.

``cli.py`` prints a CliError as one line with exit status 2; every command raises it from
here. The store's modules are imported inside the functions: the agent's install, which has
no server stack, loads every command.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Engine


class CliError(Exception):
    """A user-facing error: printed without a traceback, exit status 2."""


def open_engine(
    url: str | None,
    *,
    schema: bool = True,
    named_file_must_exist: bool = False,
    if_present: bool = False,
):
    """Return an engine on --database-url, else $CAUSELINE_DATABASE_URL, else the SQLite file.

    ``schema``: first upgrade an embedded SQLite file and require a schema elsewhere,
    on the engine returned; ``causeline db``, which manages the schema, passes False.
    ``named_file_must_exist``: a SQLite file the option or the variable names must exist:
    a mistyped path would otherwise become an empty database that answers "no incidents".
    ``if_present``: return None when neither names a database and the embedded file does
    not exist.
    """
    from correlator.settings import default_database_path, resolve_database_url
    from correlator.store.engine import make_engine

    given = url or os.environ.get("CAUSELINE_DATABASE_URL")
    if if_present and not given and not default_database_path().is_file():
        return None
    resolved = resolve_database_url(url)
    if named_file_must_exist and given:
        _require_sqlite_file(resolved)
    engine = make_engine(resolved)
    if schema:
        try:
            _schema_on(engine)
        except BaseException:
            engine.dispose()
            raise
    return engine


def ensure_schema(url: str) -> None:
    """Upgrade an embedded SQLite file; require an explicit upgrade elsewhere."""
    open_engine(url).dispose()


def _schema_on(engine: Engine) -> None:
    """Upgrade the engine's embedded SQLite file; elsewhere require a schema (CliError)."""
    from correlator.store.migrate import current_revision
    from correlator.store.migrate import upgrade as do_upgrade

    if engine.dialect.name == "sqlite":
        do_upgrade(engine)
    elif current_revision(engine) is None:
        raise CliError(
            "the database has no schema: run `causeline db upgrade --database-url ...` first"
        )


def _require_sqlite_file(url: str) -> None:
    """Raise CliError when a SQLite URL names a file that does not exist."""
    from sqlalchemy.engine import make_url

    if not url.startswith("sqlite"):
        return
    path = make_url(url).database
    if path and path != ":memory:" and not Path(path).exists():
        raise CliError(
            f"no causeline database at {Path(path).resolve()}: check --database-url (or "
            "$CAUSELINE_DATABASE_URL); `causeline db upgrade --database-url URL` creates one"
        )


def database_unreachable(exc: BaseException, url: str) -> str | None:
    """Return one line saying which database could not be opened and what to check, else None."""
    errors = sys.modules.get("sqlalchemy.exc")
    if errors is None or not isinstance(exc, errors.DBAPIError) or exc.statement is not None:
        return None  # not a failure to connect
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
        shown, password = parsed.render_as_string(hide_password=True), parsed.password
    except Exception:  # an unparsable URL fails earlier; never echo it whole
        shown, password = "the configured database", None
    reason = " ".join(str(exc.orig).split("\n", 1)[0].split()).removeprefix("connection failed: ")
    if password:
        reason = reason.replace(str(password), "***")
    if url.startswith("sqlite"):
        where = "the file's folder exists and is writable"
    else:
        where = (
            "the server runs and accepts connections there, and the URL's user, password "
            "and database name are right"
        )
    return (
        f"cannot open the database {shown} ({reason}): check that {where} "
        "(--database-url or $CAUSELINE_DATABASE_URL)"
    )
