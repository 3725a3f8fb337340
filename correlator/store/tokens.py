"""API tokens: created once, stored as SHA-256 hashes, checked on every write."""

from __future__ import annotations

import hashlib
import secrets
import time

from sqlalchemy import Connection, select

from correlator.store.tables import Token


class TokenExistsError(ValueError):
    """A token of that name already exists."""


def hash_token(token: str) -> str:
    """Return the stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(*, conn: Connection, name: str) -> str:
    """Create a token named ``name`` and return its secret (shown only this once)."""
    if conn.execute(select(Token.id).where(Token.name == name)).first():
        raise TokenExistsError(f"a token named {name!r} exists; revoke it or pick another name")
    secret = "cl_" + secrets.token_urlsafe(32)
    conn.execute(
        Token.__table__.insert().values(
            name=name, token_hash=hash_token(secret), created_at=int(time.time()), revoked=False
        )
    )
    return secret


def revoke_token(*, conn: Connection, name: str) -> bool:
    """Revoke the token named ``name``; return whether one was found."""
    result = conn.execute(Token.__table__.update().where(Token.name == name).values(revoked=True))
    return result.rowcount > 0


def token_name(*, conn: Connection, secret: str) -> str | None:
    """Return the name of a valid (not revoked) token, or None."""
    row = conn.execute(
        select(Token.name).where(Token.token_hash == hash_token(secret), Token.revoked.is_(False))
    ).first()
    return row[0] if row else None


def list_tokens(*, conn: Connection) -> list[dict]:
    """Return every token's name, creation time and state (never the secret)."""
    rows = conn.execute(select(Token.name, Token.created_at, Token.revoked).order_by(Token.id))
    return [{"name": n, "created_at": c, "revoked": r} for n, c, r in rows]
