"""Changes on Grafana's timeline: each change done, once per Grafana channel, via the outbox.

The worker calls ``enqueue_change_annotations`` every sweep, so a change registered any
way (API, deploy hook, CLI, import) is annotated without each path having to remember;
the outbox's dedup key makes it once per change and channel.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from correlator.alerts import grafana
from correlator.alerts.outbox import insert_row
from correlator.alerts.routing import AlertConfig
from correlator.store.changes import query_changes
from correlator.store.tables import AlertOutbox

WINDOW_S = 86_400.0  # changes done this long ago at most: a new channel is not flooded
MAX_PER_PASS = 500  # changes looked at in one pass, newest first


def change_key(change_id: str, channel: str) -> str:
    """Return the outbox key of a change's annotation on a channel."""
    return f"change:{change_id}:{channel}"[:400]


def enqueue_change_annotations(
    *, conn: Connection, config: AlertConfig, public_url: str, now: float
) -> int:
    """Queue the annotation of every recent change done not yet queued; return rows written."""
    channels = [c for c in config.channels.values() if c.kind == "grafana"]
    if not channels:
        return 0
    done = [c for c in query_changes(conn=conn, start=now - WINDOW_S, end=now) if c["ts"]]
    wanted = {
        change_key(c["id"], ch.name): (c, ch) for c in done[-MAX_PER_PASS:] for ch in channels
    }
    if not wanted:
        return 0
    have = set(conn.scalars(select(AlertOutbox.dedup_key).where(AlertOutbox.dedup_key.in_(wanted))))
    written = 0
    for key, (change, channel) in wanted.items():
        if key not in have:
            written += insert_row(
                conn=conn,
                dedup_key=key,
                incident_id=None,
                event="change",
                channel=channel,
                payload=grafana.render_change(change, public_url),
                labels=dict(change.get("labels") or {}),
                now=now,
            )
    return written
