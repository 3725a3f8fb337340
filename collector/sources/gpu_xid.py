"""A thread that waits on an NVML event set for XID critical errors."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

from collector.schema import Event

log = logging.getLogger(__name__)
WAIT_MS = 500


class XidWatcher:
    """Collect XID critical-error events from every registered GPU."""

    def __init__(
        self,
        nvml,
        handles: list,
        *,
        host: str,
        labels_of: Callable[[int], dict[str, str]],
        wallclock: Callable[[], float] = time.time,
    ):
        self._nvml = nvml
        self._host = host
        self._labels_of = labels_of
        self._wallclock = wallclock
        self._lock = threading.Lock()
        self._pending: list[Event] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._set = nvml.nvmlEventSetCreate()
        self.registered = 0
        for index, handle in enumerate(handles):
            if handle is None:  # unreadable at start
                continue
            try:
                nvml.nvmlDeviceRegisterEvents(handle, nvml.nvmlEventTypeXidCriticalError, self._set)
                self.registered += 1
            except nvml.NVMLError as exc:
                log.info("GPU %d: XID events not available (%s)", index, exc)

    def start(self) -> None:
        """Start the waiting thread if any GPU was registered."""
        if self.registered:
            self._thread = threading.Thread(target=self._run, name="causeline-xid", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        nvml = self._nvml
        while not self._stop.is_set():
            try:
                data = nvml.nvmlEventSetWait_v2(self._set, WAIT_MS)
            except nvml.NVMLError as exc:
                if getattr(exc, "value", None) != nvml.NVML_ERROR_TIMEOUT:
                    log.warning("NVML event wait failed: %s", exc)
                    self._stop.wait(1.0)
                continue
            self._record(data)

    def _record(self, data) -> None:
        nvml = self._nvml
        try:
            index = nvml.nvmlDeviceGetIndex(data.device)
        except nvml.NVMLError:
            index = -1
        ts = self._wallclock()
        xid = int(data.eventData)
        labels = {"host": self._host, **self._labels_of(index), "xid": str(xid)}
        event = Event(
            id=f"xid-{self._host}-{index}-{xid}-{int(ts * 1000)}",
            ts=ts,
            kind="gpu_xid",
            summary=f"XID {xid} on GPU {index} of {self._host}",
            labels=labels,
        )
        log.warning("%s", event.summary)
        with self._lock:
            self._pending.append(event)

    def drain(self) -> list[Event]:
        """Return and forget the events seen since the last call."""
        with self._lock:
            events, self._pending = self._pending, []
        return events

    def close(self) -> None:
        """Stop the thread and free the event set."""
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2 * WAIT_MS / 1000 + 1)
        with contextlib.suppress(self._nvml.NVMLError):
            self._nvml.nvmlEventSetFree(self._set)
