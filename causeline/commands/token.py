"""``causeline token``: create, list and revoke API tokens."""

from __future__ import annotations

from causeline.commands.errors import CliError, open_engine
from causeline.commands.options import add_database_option, subparser


def register(sub) -> None:
    """Add the token subcommand group."""
    p = subparser(
        sub,
        "token",
        "manage API tokens for agents and writers",
        "causeline token create gpu-node-1",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = subparser(
        actions,
        "create",
        "create a token and print it (shown only once)",
        "causeline token create gpu-node-1\n  causeline token create ci-deploy --scope write",
    )
    create.add_argument("name", help="who uses the token, e.g. the agent's host")
    create.add_argument(
        "--scope",
        choices=("ingest", "write", "admin"),
        default="ingest",
        help="ingest (default: agents, metrics and fingerprints), write (changes, SLAs, "
        "incidents, silences, notes, hooks) or admin (also deletes); each includes the one before",
    )
    add_database_option(create)
    create.set_defaults(func=create_cmd)
    revoke = subparser(
        actions, "revoke", "revoke a token by name", "causeline token revoke gpu-node-1"
    )
    revoke.add_argument("name")
    add_database_option(revoke)
    revoke.set_defaults(func=revoke_cmd)
    listing = subparser(
        actions, "list", "list token names (never the secrets)", "causeline token list"
    )
    add_database_option(listing)
    listing.set_defaults(func=list_cmd)


def create_cmd(args) -> int:
    """Create a token and print its secret on stdout."""
    from correlator.store.engine import write_transaction
    from correlator.store.tokens import TokenExistsError, create_token

    engine = open_engine(args.database_url)
    try:
        with write_transaction(engine) as conn:
            secret = create_token(conn=conn, name=args.name, scope=args.scope)
    except TokenExistsError as exc:
        raise CliError(str(exc)) from exc
    finally:
        engine.dispose()
    print(secret)
    return 0


def revoke_cmd(args) -> int:
    """Revoke a token."""
    from correlator.store.engine import write_transaction
    from correlator.store.tokens import revoke_token

    engine = open_engine(args.database_url)
    try:
        with write_transaction(engine) as conn:
            found = revoke_token(conn=conn, name=args.name)
    finally:
        engine.dispose()
    if not found:
        raise CliError(f"no token named {args.name!r}")
    print(f"revoked {args.name}")
    return 0


def list_cmd(args) -> int:
    """Print token names and states."""
    from correlator.store.tokens import list_tokens

    engine = open_engine(args.database_url)
    try:
        with engine.connect() as conn:
            for t in list_tokens(conn=conn):
                print(f"{t['name']}\t{t['scope']}\t{'revoked' if t['revoked'] else 'active'}")
    finally:
        engine.dispose()
    return 0
