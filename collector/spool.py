"""On-disk spool of gzip-compressed batches, oldest first, bounded by size.

Every batch is written here before it is sent (write-ahead), so neither an
outage of the service nor a killed agent loses it. A file is named
``<seq>-<samples>-<events>.json.gz``; when the spool would exceed its size
bound, the oldest files are deleted and their samples counted as dropped.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import os
import threading
from dataclasses import dataclass

from collector.health import AgentHealth
from collector.schema import Batch

log = logging.getLogger(__name__)
SUFFIX = ".json.gz"


@dataclass(frozen=True, slots=True)
class SpoolEntry:
    """One spooled batch file."""

    path: str
    samples: int
    events: int
    size: int

    @property
    def name(self) -> str:
        """Return the file name (which sorts in delivery order)."""
        return os.path.basename(self.path)


def _parse(directory: str, name: str) -> SpoolEntry | None:
    if not name.endswith(SUFFIX):
        return None
    parts = name[: -len(SUFFIX)].split("-")
    if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    path = os.path.join(directory, name)
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    return SpoolEntry(path, int(parts[1]), int(parts[2]), size)


class Spool:
    """A directory of pending batches with a byte bound."""

    def __init__(
        self,
        directory: str,
        *,
        max_bytes: int = 256 * 1024 * 1024,
        health: AgentHealth | None = None,
        compresslevel: int = 6,
    ):
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.max_bytes = max_bytes
        self.health = health or AgentHealth()
        self._level = compresslevel
        self._lock = threading.Lock()
        self._entries: list[SpoolEntry] = sorted(
            (e for n in os.listdir(directory) if (e := _parse(directory, n))), key=lambda e: e.name
        )
        self._seq = max((int(e.name.split("-")[0][:16]) for e in self._entries), default=0)
        self._update_health()

    def put(self, batch: Batch, *, seq: str | None = None) -> SpoolEntry:
        """Write one batch (atomically) and enforce the size bound.

        ``seq`` places a batch at a given position (a split batch keeps its
        original's place: ``<seq>a``, ``<seq>b``); by default it goes last.
        """
        body = gzip.compress(
            json.dumps(batch.to_json(), separators=(",", ":")).encode(), compresslevel=self._level
        )
        with self._lock:
            if seq is None:
                self._seq += 1
                seq = f"{self._seq:016d}"
            name = f"{seq}-{batch.sample_count}-{len(batch.events)}{SUFFIX}"
            path = os.path.join(self.directory, name)
            tmp = path + ".tmp"
            with open(tmp, "wb") as fh:
                fh.write(body)
            os.replace(tmp, path)
            entry = SpoolEntry(path, batch.sample_count, len(batch.events), len(body))
            self._entries.append(entry)
            self._entries.sort(key=lambda e: e.name)
            self._enforce_bound()
            self._update_health()
        self.health.count("samples_spooled", batch.sample_count)
        return entry

    def _enforce_bound(self) -> None:
        while len(self._entries) > 1 and self.total_bytes > self.max_bytes:
            oldest = self._entries.pop(0)
            self._unlink(oldest.path)
            self.health.count("samples_dropped", oldest.samples)
            self.health.count("events_dropped", oldest.events)
            log.warning(
                "spool full (%d bytes > %d): dropped oldest batch %s with %d samples",
                self.total_bytes + oldest.size,
                self.max_bytes,
                oldest.name,
                oldest.samples,
            )

    @property
    def total_bytes(self) -> int:
        """Return the bytes held by the spool."""
        return sum(e.size for e in self._entries)

    def oldest(self) -> SpoolEntry | None:
        """Return the next batch to deliver, or None."""
        with self._lock:
            return self._entries[0] if self._entries else None

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, entry: SpoolEntry) -> bytes:
        """Return the gzip body of an entry."""
        with open(entry.path, "rb") as fh:
            return fh.read()

    def remove(self, entry: SpoolEntry) -> None:
        """Forget a delivered (or rejected) entry."""
        with self._lock:
            if entry in self._entries:
                self._entries.remove(entry)
            self._unlink(entry.path)
            self._update_health()

    def set_aside(self, entry: SpoolEntry) -> str:
        """Move a batch the service refused into ``rejected/`` for inspection."""
        target_dir = os.path.join(self.directory, "rejected")
        os.makedirs(target_dir, exist_ok=True)
        target = os.path.join(target_dir, entry.name)
        with self._lock:
            if entry in self._entries:
                self._entries.remove(entry)
            with contextlib.suppress(OSError):
                os.replace(entry.path, target)
            self._update_health()
        return target

    @staticmethod
    def _unlink(path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def _update_health(self) -> None:
        self.health.spool_bytes = self.total_bytes
        self.health.spool_files = len(self._entries)
