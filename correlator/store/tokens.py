"""API tokens: created once, stored as SHA-256 hashes, checked on every write."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.exc import IntegrityError

from correlator.store.tables import Token

# Each scope includes the ones before it.
SCOPES = ("ingest", "write", "admin")


class TokenExistsError(ValueError):
    """An active token of that name already exists."""


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """Who a valid token is: its name and scope."""

    name: str
    scope: str

    def allows(self, scope: str) -> bool:
        """Say whether this token's scope includes ``scope``."""
        return SCOPES.index(self.scope) >= SCOPES.index(scope)


def hash_token(token: str) -> str:
    """Return the stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_scope(scope: str) -> str:
    """Return ``scope`` when it is one of SCOPES; raise ValueError naming them otherwise."""
    if scope not in SCOPES:
        raise ValueError(f"unknown token scope {scope!r}; one of {', '.join(SCOPES)}")
    return scope


def create_token(*, conn: Connection, name: str, scope: str = "admin") -> str:
    """Create an active token named ``name`` and return its secret (shown only this once)."""
    check_scope(scope)
    exists = TokenExistsError(f"a token named {name!r} exists; revoke it or pick another name")
    active = select(Token.id).where(Token.name == name, Token.revoked.is_(False))
    if conn.execute(active).first():
        raise exists
    secret = "cl_" + secrets.token_urlsafe(32)
    row = {"name": name, "token_hash": hash_token(secret), "revoked": False, "scope": scope}
    try:
        conn.execute(insert(Token).values(row | {"created_at": time.time()}))
    except IntegrityError as exc:  # created by someone else since the check (rolls back)
        raise exists from exc
    return secret


def revoke_token(*, conn: Connection, name: str) -> bool:
    """Revoke the active token named ``name``; return whether one was found."""
    result = conn.execute(
        update(Token).where(Token.name == name, Token.revoked.is_(False)).values(revoked=True)
    )
    return result.rowcount > 0


def token_info(*, conn: Connection, secret: str) -> TokenInfo | None:
    """Return the name and scope of a valid (not revoked) token, or None."""
    row = conn.execute(
        select(Token.name, Token.scope).where(
            Token.token_hash == hash_token(secret), Token.revoked.is_(False)
        )
    ).first()
    return TokenInfo(name=row[0], scope=row[1]) if row else None


def token_name(*, conn: Connection, secret: str) -> str | None:
    """Return the name of a valid (not revoked) token, or None."""
    info = token_info(conn=conn, secret=secret)
    return info.name if info else None


def list_tokens(*, conn: Connection) -> list[dict]:
    """Return every token's name, scope, creation time and state (never the secret)."""
    rows = conn.execute(
        select(Token.name, Token.scope, Token.created_at, Token.revoked).order_by(Token.id)
    )
    return [{"name": n, "scope": s, "created_at": c, "revoked": r} for n, s, c, r in rows]
