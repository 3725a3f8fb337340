"""Host metrics through psutil: CPU, memory, disk IO and network throughput.

Rates and busy percentages are deltas between two ``sample()`` calls, so the
first call reports only the gauges (memory).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from collector.reading import Reading

IGNORED_DISK_PREFIXES = ("loop", "ram", "zram", "fd", "sr")
IGNORED_NICS = ("lo",)


class HostSource:
    """Sample the host through an injectable ``psutil`` handle."""

    name = "host"

    def __init__(self, psutil=None, *, host: str, clock: Callable[[], float] = time.monotonic):
        if psutil is None:
            import psutil as psutil_module

            psutil = psutil_module
        self._ps = psutil
        self._labels = {"host": host}
        self._clock = clock
        self._prev: tuple | None = None

    def sample(self) -> Reading:
        """Return CPU, memory, disk and network readings."""
        ps, labels, out = self._ps, self._labels, Reading()
        mem = ps.virtual_memory()
        out.add("node_memory_used_bytes", mem.total - mem.available, labels)
        out.add("node_memory_total_bytes", mem.total, labels)
        now = (
            self._clock(),
            ps.cpu_times(),
            ps.disk_io_counters(perdisk=True) or {},
            ps.net_io_counters(pernic=True) or {},
        )
        if self._prev is not None:
            dt = now[0] - self._prev[0]
            if dt > 0:
                self._cpu(self._prev[1], now[1], out)
                self._disks(self._prev[2], now[2], dt, out)
                self._nics(self._prev[3], now[3], dt, out)
        self._prev = now
        return out

    def _cpu(self, before, after, out: Reading) -> None:
        total = sum(after) - sum(before)
        idle = (after.idle - before.idle) + (
            getattr(after, "iowait", 0.0) - getattr(before, "iowait", 0.0)
        )
        if total > 0:
            busy = min(100.0, max(0.0, 100.0 * (total - idle) / total))
            out.add("node_cpu_utilization_percent", busy, self._labels)

    def _disks(self, before: dict, after: dict, dt: float, out: Reading) -> None:
        busiest = None
        for dev, now in after.items():
            old = before.get(dev)
            if old is None or dev.startswith(IGNORED_DISK_PREFIXES):
                continue
            labels = {**self._labels, "device": dev}
            busy_ms = getattr(now, "busy_time", None)
            if busy_ms is not None:
                pct = min(100.0, max(0.0, (busy_ms - old.busy_time) / (dt * 10.0)))
                out.add("node_disk_busy_percent", pct, labels)
                busiest = pct if busiest is None else max(busiest, pct)
            out.add(
                "node_disk_read_bytes_per_second",
                max(0, now.read_bytes - old.read_bytes) / dt,
                labels,
            )
            out.add(
                "node_disk_written_bytes_per_second",
                max(0, now.write_bytes - old.write_bytes) / dt,
                labels,
            )
        if busiest is not None:
            out.add("node_disk_io_utilization_percent", busiest, self._labels)

    def _nics(self, before: dict, after: dict, dt: float, out: Reading) -> None:
        rx_total = tx_total = 0.0
        for nic, now in after.items():
            old = before.get(nic)
            if old is None:
                continue
            rx = max(0, now.bytes_recv - old.bytes_recv) / dt
            tx = max(0, now.bytes_sent - old.bytes_sent) / dt
            labels = {**self._labels, "device": nic}
            out.add("node_network_receive_bytes_per_second", rx, labels)
            out.add("node_network_transmit_bytes_per_second", tx, labels)
            if nic not in IGNORED_NICS:
                rx_total += rx
                tx_total += tx
        if after:
            out.add("node_network_receive_bytes_per_second", rx_total, self._labels)
            out.add("node_network_transmit_bytes_per_second", tx_total, self._labels)

    def close(self) -> None:
        """Release nothing: psutil holds no handles between calls."""
