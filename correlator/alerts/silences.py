"""Silences: label matchers with an end time; repository functions and matching."""

from __future__ import annotations

from sqlalchemy import Connection, select, update
from sqlalchemy.orm import Session

from correlator.store.millis import to_millisecond
from correlator.store.tables import AlertSilence
from correlator.text import repair


def silence_dict(row: AlertSilence, now: float | None = None) -> dict:
    """Return the API form of a silence (a surrogate stored before text was checked: U+FFFD)."""
    out = {
        "id": row.id,
        "matchers": repair(row.matchers),
        "starts_at": row.starts_at,
        "ends_at": row.ends_at,
        "comment": row.comment,
        "author": row.author,
        "created_at": row.created_at,
    }
    if now is not None:
        active = row.starts_at <= to_millisecond(now) < row.ends_at
        out["state"] = "active" if active else ("pending" if row.ends_at > now else "expired")
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
        starts_at=starts_at,
        ends_at=ends_at,
        comment=comment,
        author=author,
        created_at=now,
    )
    session = Session(conn)
    session.add(row)
    session.flush()
    return silence_dict(row, now)


def list_silences(*, conn: Connection, now: float, include_expired: bool = False) -> list[dict]:
    """Return silences, newest first; expired ones only when asked."""
    stmt = select(AlertSilence).order_by(AlertSilence.id.desc())
    if not include_expired:
        stmt = stmt.where(AlertSilence.ends_at > now)
    return [silence_dict(r, now) for r in Session(conn).scalars(stmt)]


def expire_silence(*, conn: Connection, silence_id: int, now: float) -> bool:
    """End a silence now; return False when it is unknown."""
    result = conn.execute(
        update(AlertSilence).where(AlertSilence.id == silence_id).values(ends_at=now)
    )
    return result.rowcount == 1


def silenced_until(
    *, conn: Connection, labels: dict[str, str], channel: str, now: float
) -> float | None:
    """Return when the longest active silence matching the alert ends, or None."""
    rows = conn.execute(
        select(AlertSilence.matchers, AlertSilence.ends_at).where(
            AlertSilence.starts_at <= now, AlertSilence.ends_at > now
        )
    )
    ends = [end for m, end in rows if matches(m or {}, labels, channel)]
    return max(ends) if ends else None
