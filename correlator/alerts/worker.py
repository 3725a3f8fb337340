"""The outbox worker: claims due rows, sends them with retries, re-sends firing alerts."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import TYPE_CHECKING

from sqlalchemy import Engine, and_, exists, func, or_, select, update
from sqlalchemy.orm import aliased

from correlator.alerts.annotations import enqueue_change_annotations
from correlator.alerts.channels import Channel
from correlator.alerts.formats import alert_format
from correlator.alerts.masking import channel_secrets, scrub, scrub_cut
from correlator.alerts.outbox import enqueue_incident_event
from correlator.alerts.routing import AlertConfig, load_config
from correlator.alerts.silences import silenced_until
from correlator.alerts.transport import HttpTransport, RefusedTarget
from correlator.store.engine import write_transaction
from correlator.store.incidents import get_incident
from correlator.store.tables import AlertOutbox, Incident

if TYPE_CHECKING:
    from correlator.settings import ServiceSettings


log = logging.getLogger(__name__)
PERMANENT = {400, 401, 403, 404, 405, 410, 413, 422}
BATCH = 50
MAX_ERROR = 1000  # characters of a failed answer kept in last_error
SWEEP_EVERY_S = 30.0
SWEEP_GRACE_S = 60.0
SWEEP_WINDOW_S = 3600.0


class OutboxWorker:
    """Send pending outbox rows; safe with several processes on one PostgreSQL."""

    def __init__(
        self,
        engine: Engine,
        settings: ServiceSettings,
        *,
        holder: str,
        transport=None,
        rng=None,
        source=None,
    ):
        self.engine = engine
        self.settings = settings
        self.holder = holder
        self.source = source  # serves SLA values kept outside the store (Prometheus)
        self.transport = transport or HttpTransport(
            settings.alert_http_timeout_seconds, settings=settings
        )
        self.rng = rng or random.Random()
        self._last_sweep = 0.0

    def backoff(self, attempts: int) -> float:
        """Return the wait before the next try: exponential, capped, with jitter."""
        base = self.settings.alert_retry_base_seconds * 2 ** max(attempts - 1, 0)
        return min(self.settings.alert_retry_cap_seconds, base) * self.rng.uniform(0.5, 1.0)

    def run_once(self, now: float | None = None) -> dict:
        """Do one pass: release, claim, send, re-send firing alerts; return the counts."""
        now = time.time() if now is None else now
        counts = (
            "sent",
            "retry",
            "failed",
            "silenced",
            "deferred",
            "refreshed",
            "swept",
            "annotated",
        )
        report = dict.fromkeys(counts, 0)
        try:
            config = load_config(self.settings)
        except (OSError, ValueError) as exc:
            log.error("alert routes are unusable, nothing sent: %s", exc)
            return report
        if now - self._last_sweep >= SWEEP_EVERY_S:
            self._last_sweep = now
            report["swept"] = self.sweep(now)
            with write_transaction(self.engine) as conn:
                report["annotated"] = enqueue_change_annotations(
                    conn=conn, config=config, public_url=self.settings.public_url, now=now
                )
        self._release(now)
        for row in self._claim(now):
            self._deliver(config, row, now, report)
        self._refresh(config, now, report)
        return report

    def sweep(self, now: float) -> int:
        """Announce incidents opened in the last hour that have no message yet; return them.

        A safety net for an incident whose opening transaction committed but whose
        ``opened`` message was never enqueued (a crash between the two).
        """
        announced = exists().where(AlertOutbox.incident_id == Incident.id)
        with self.engine.connect() as conn:
            ids = conn.scalars(
                select(Incident.id).where(
                    Incident.status == "open",
                    Incident.opened_at <= now - SWEEP_GRACE_S,
                    Incident.opened_at >= now - SWEEP_WINDOW_S,
                    ~announced,
                )
            ).all()
        written = 0
        for incident_id in ids:
            with write_transaction(self.engine) as conn:
                incident = get_incident(conn=conn, incident_id=incident_id)
                if incident is not None and incident["status"] == "open":
                    written += enqueue_incident_event(
                        conn=conn,
                        incident=incident,
                        event="opened",
                        settings=self.settings,
                        source=self.source,
                    )
        return written

    def _release(self, now: float) -> None:
        with write_transaction(self.engine) as conn:
            conn.execute(
                update(AlertOutbox)
                .where(AlertOutbox.status == "sending", AlertOutbox.claimed_until < now)
                .values(status="pending", claimed_by="")
            )
            held = conn.execute(
                select(AlertOutbox.id, AlertOutbox.labels, AlertOutbox.channel)
                .join(Incident, Incident.id == AlertOutbox.incident_id)
                .where(
                    AlertOutbox.status == "silenced",
                    AlertOutbox.event != "resolved",
                    Incident.status == "open",
                )
            ).all()
            for row_id, labels, channel in held:  # a silence may have been expired early
                if silenced_until(conn=conn, labels=labels, channel=channel, now=now) is None:
                    conn.execute(
                        update(AlertOutbox)
                        .where(AlertOutbox.id == row_id)
                        .values(status="pending", next_attempt_at=now)
                    )

    def _claim(self, now: float) -> list:
        earlier = aliased(AlertOutbox)
        blocked = exists().where(
            earlier.incident_id == AlertOutbox.incident_id,
            earlier.channel == AlertOutbox.channel,
            earlier.id < AlertOutbox.id,
            earlier.status.in_(("pending", "sending")),
        )
        with write_transaction(self.engine) as conn:
            ids = conn.scalars(
                select(AlertOutbox.id)
                .where(
                    AlertOutbox.status == "pending",
                    AlertOutbox.next_attempt_at <= now,
                    ~blocked,
                )
                .order_by(AlertOutbox.id)
                .limit(BATCH)
                .with_for_update(skip_locked=True)
            ).all()
            if not ids:
                return []
            conn.execute(
                update(AlertOutbox)
                .where(AlertOutbox.id.in_(ids))
                .values(
                    status="sending",
                    claimed_by=self.holder,
                    claimed_until=now + self.settings.alert_claim_seconds,
                    attempts=AlertOutbox.attempts + 1,
                )
            )
            return list(
                conn.execute(
                    select(AlertOutbox).where(AlertOutbox.id.in_(ids)).order_by(AlertOutbox.id)
                ).all()
            )

    def _finish(self, row_id: int, **values) -> None:
        with write_transaction(self.engine) as conn:
            conn.execute(
                update(AlertOutbox)
                .where(
                    AlertOutbox.id == row_id,
                    AlertOutbox.claimed_by == self.holder,
                    AlertOutbox.status == "sending",
                )
                .values(claimed_by="", **values)
            )

    def _sent_last_minute(self, channel: str, now: float) -> int:
        with self.engine.connect() as conn:
            return conn.execute(
                select(func.count())
                .select_from(AlertOutbox)
                .where(
                    AlertOutbox.channel == channel,
                    AlertOutbox.sent_at > now - 60.0,
                )
            ).scalar_one()

    def _deliver(self, config: AlertConfig, row, now: float, report: dict) -> None:
        channel = config.channels.get(row.channel)
        if channel is None:
            self._finish(row.id, status="failed", last_error="channel no longer configured")
            report["failed"] += 1
            return
        with self.engine.connect() as conn:
            until = silenced_until(conn=conn, labels=row.labels, channel=channel.name, now=now)
        if until:
            self._finish(row.id, status="silenced", silenced_until=until)
            report["silenced"] += 1
            return
        if self._sent_last_minute(channel.name, now) >= channel.rate_per_minute:
            self._finish(
                row.id,
                status="pending",
                attempts=row.attempts - 1,
                next_attempt_at=now + 5.0,
            )
            report["deferred"] += 1
            return
        error, permanent = self._post(channel, row.payload, now, f"causeline-{row.id}")
        if error is None:
            self._finish(row.id, status="sent", sent_at=time.time(), last_error="")
            report["sent"] += 1
        elif permanent or row.attempts >= self.settings.alert_max_attempts:
            log.warning("alert %s to %s failed for good: %s", row.id, channel.name, error)
            self._finish(row.id, status="failed", last_error=error)
            report["failed"] += 1
        else:
            wait = self.backoff(row.attempts)
            log.info("alert %s to %s: %s; retry in %.1f s", row.id, channel.name, error, wait)
            self._finish(
                row.id,
                status="pending",
                last_error=error,
                next_attempt_at=now + wait,
            )
            report["retry"] += 1

    def _post(
        self, channel: Channel, payload, now: float, delivery_id: str
    ) -> tuple[str | None, bool]:
        fmt = alert_format(channel.kind)
        secrets = channel_secrets(channel.url, channel.secret, channel.headers)
        try:
            request = fmt.request(payload, channel, now=time.time(), delivery_id=delivery_id)
            status, text = self.transport.post(request)
        except RefusedTarget as exc:  # nothing was sent; the host resolves somewhere refused
            return scrub(str(exc), *secrets)[:MAX_ERROR], True
        except Exception as exc:  # any other transport failure is retried
            return scrub_cut(f"{type(exc).__name__}: {exc}", MAX_ERROR, *secrets), False
        # Scrub the whole answer before any cut: a secret cut in half no longer matches.
        error = fmt.error(status, scrub_cut(text, len(text), *secrets))
        if error is None:
            return None, False
        return scrub_cut(error, MAX_ERROR, *secrets), status in PERMANENT

    def _refresh(self, config: AlertConfig, now: float, report: dict) -> None:
        names = [c.name for c in config.channels.values() if c.kind == "alertmanager"]
        if not names:
            return
        later = aliased(AlertOutbox)
        newer = exists().where(
            later.incident_id == AlertOutbox.incident_id,
            later.channel == AlertOutbox.channel,
            later.id > AlertOutbox.id,
        )
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(AlertOutbox)
                .join(Incident, Incident.id == AlertOutbox.incident_id)
                .where(
                    AlertOutbox.channel.in_(names),
                    AlertOutbox.status == "sent",
                    AlertOutbox.event != "resolved",
                    Incident.status == "open",
                    ~newer,
                )
            ).all()
        for row in rows:
            channel = config.channels[row.channel]
            last = row.refreshed_at or row.sent_at or 0
            if last > now - channel.resend_seconds:
                continue
            with write_transaction(self.engine) as conn:
                took = conn.execute(
                    update(AlertOutbox)
                    .where(
                        AlertOutbox.id == row.id,
                        or_(
                            AlertOutbox.refreshed_at.is_(None),
                            and_(AlertOutbox.refreshed_at == row.refreshed_at),
                        ),
                    )
                    .values(refreshed_at=now)
                ).rowcount
            if took != 1:
                continue  # another process re-sends it
            error, _ = self._post(channel, row.payload, now, f"causeline-{row.id}-refresh")
            if error:
                log.info("re-sending firing alert %s to %s: %s", row.id, channel.name, error)
            else:
                report["refreshed"] += 1

    async def run(self, interval: float) -> None:
        """Run passes every ``interval`` seconds until cancelled."""
        while True:
            try:
                await asyncio.to_thread(self.run_once)
            except Exception:
                log.exception("alert outbox pass failed")
            await asyncio.sleep(interval)

    def close(self) -> None:
        """Release the transport."""
        close = getattr(self.transport, "close", None)
        if close:
            close()
