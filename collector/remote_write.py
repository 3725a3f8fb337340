"""Delivery of spooled batches to a Prometheus remote-write 1.0 endpoint (VictoriaMetrics...).

Each batch becomes one ``WriteRequest`` (protobuf, snappy block-compressed).
2xx removes it from the spool; connection errors, 429 and 5xx are retried with
backoff, sending the same bytes again (the TSDB keeps one sample per series and
timestamp, so a repeat adds nothing); any other status drops the batch with an
error naming the status and the answer, as Prometheus does. Events (XIDs,
probe failures, fingerprints) have no place in remote write and are not sent.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
from collections.abc import Mapping
from typing import Unpack

import httpx

from collector.prompb import encode_write_request
from collector.schema import SeriesBatch
from collector.shipper import SenderOptions, SpoolSender
from collector.snappy import compress
from collector.spool import Spool, SpoolEntry

log = logging.getLogger(__name__)
PROTOCOL_HEADERS = {
    "Content-Encoding": "snappy",
    "Content-Type": "application/x-protobuf",
    "X-Prometheus-Remote-Write-Version": "0.1.0",
}


def write_body(spooled: bytes) -> bytes:
    """Return the snappy ``WriteRequest`` of one spooled (gzip JSON) batch."""
    doc = json.loads(gzip.decompress(spooled))
    series = (
        SeriesBatch(s["name"], s.get("labels") or {}, s["timestamps"], s["values"])
        for s in doc.get("series", [])
    )
    return compress(encode_write_request(series))


class RemoteWriteSender(SpoolSender):
    """A thread that drains a spool into ``POST {url}`` as Prometheus remote write 1.0."""

    thread_name = "causeline-remote-write"

    def __init__(
        self,
        spool: Spool,
        *,
        url: str,
        headers: Mapping[str, str] | None = None,
        bearer_token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        timeout: float = 30.0,
        **options: Unpack[SenderOptions],
    ):
        super().__init__(spool, timeout=timeout, **options)
        self.url = url
        self._headers = {**(headers or {}), **PROTOCOL_HEADERS}
        if bearer_token:
            self._headers["Authorization"] = f"Bearer {bearer_token}"
        if basic_auth:
            pair = f"{basic_auth[0]}:{basic_auth[1]}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        self._body: tuple[str, bytes] | None = None  # the oldest batch's encoded body

    def _encoded(self, entry: SpoolEntry) -> bytes:
        if self._body is None or self._body[0] != entry.path:
            self._body = (entry.path, write_body(self.spool.read(entry)))
        return self._body[1]

    def send_one(self) -> bool | None:
        """Try the oldest batch: True done with it, False failed (retry), None nothing to send."""
        entry = self.spool.oldest()
        if entry is None:
            return None
        try:
            body = self._encoded(entry)
        except FileNotFoundError:  # dropped by the size bound meanwhile
            self.spool.remove(entry)
            return True
        except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
            target = self.spool.set_aside(entry)
            self.health.count("batches_rejected")
            log.error(
                "spooled batch %s is unreadable (%s); set aside in %s", entry.name, exc, target
            )
            return True
        try:
            resp = self._client.post(self.url, content=body, headers=self._headers)
        except httpx.HTTPError as exc:
            return self._failed(entry, f"{type(exc).__name__}: {exc}")
        code = resp.status_code
        if 200 <= code < 300:
            self._body = None
            return self._delivered(entry)
        if code == 429 or code >= 500:
            return self._failed(entry, f"HTTP {code}: {resp.text[:200]}")
        self._body = None
        self.spool.remove(entry)
        self.health.count("batches_rejected")
        self.health.count("samples_dropped", entry.samples)
        log.error(
            "remote write to %s refused batch %s with HTTP %d: %s; dropped its %d samples "
            "(not retried, as Prometheus does)",
            self.url,
            entry.name,
            code,
            resp.text[:300],
            entry.samples,
        )
        return True
