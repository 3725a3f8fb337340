"""Silences: label matchers with an end time; repository functions and matching."""

from __future__ import annotations

from sqlalchemy import Connection, select, update
from sqlalchemy.orm import Session

from correlator.store.tables import AlertSilence


def silence_dict(row: AlertSilence, now: float | None = None) -> dict:
    """Return the API form of a silence."""
    out = {
        "id": row.id,
        "matchers": row.matchers,
        "starts_at": row.starts_at / 1000.0,
        "ends_at": row.ends_at / 1000.0,
        "comment": row.comment,
        "author": row.author,
        "created_at": row.created_at / 1000.0,
    }
    if now is not None:
        active = row.starts_at <= round(now * 1000) < row.ends_at
        out["state"] = (
            "active" if active else ("pending" if row.ends_at > now * 1000 else "expired")
        )
    return out


def matches(matchers: dict, labels: dict[str, str], channel: str | None = None) -> bool:
    """Say whether every matcher equals the alert's label (``channel`` matches the channel)."""
    if not matchers:
        return False
    for key, value in matchers.items():
        have = channel if key == "channel" else labels.get(key)
        if have is None or str(have) != str(value):
            return False
    return True


def add_silence(
    *,
    conn: Connection,
    matchers: dict,
    starts_at: float,
    ends_at: float,
    comment: str,
    author: str,
    now: float,
) -> dict:
    """Store a silence; return it."""
    row = AlertSilence(
        matchers={str(k): str(v) for k, v in matchers.items()},
        starts_at=round(starts_at * 1000),
        ends_at=round(ends_at * 1000),
        comment=comment,
        author=author,
        created_at=round(now * 1000),
    )
    session = Session(conn)
    session.add(row)
    session.flush()
    return silence_dict(row, now)


def list_silences(*, conn: Connection, now: float, include_expired: bool = False) -> list[dict]:
    """Return silences, newest first; expired ones only when asked."""
    stmt = select(AlertSilence).order_by(AlertSilence.id.desc())
    if not include_expired:
        stmt = stmt.where(AlertSilence.ends_at > round(now * 1000))
    return [silence_dict(r, now) for r in Session(conn).scalars(stmt)]


def expire_silence(*, conn: Connection, silence_id: int, now: float) -> bool:
    """End a silence now; return False when it is unknown."""
    result = conn.execute(
        update(AlertSilence).where(AlertSilence.id == silence_id).values(ends_at=round(now * 1000))
    )
    return result.rowcount == 1


def silenced_until(
    *, conn: Connection, labels: dict[str, str], channel: str, now: float
) -> int | None:
    """Return when the longest active silence matching the alert ends (ms), or None."""
    now_ms = round(now * 1000)
    rows = conn.execute(
        select(AlertSilence.matchers, AlertSilence.ends_at).where(
            AlertSilence.starts_at <= now_ms, AlertSilence.ends_at > now_ms
        )
    )
    ends = [end for m, end in rows if matches(m or {}, labels, channel)]
    return max(ends) if ends else None
