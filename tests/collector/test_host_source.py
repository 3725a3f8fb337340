"""Host source: exact arithmetic on a recorded psutil fake, real psutil under real load."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from types import SimpleNamespace

import pytest

from collector.sources.host import HostSource


def _get(reading, name, **labels):
    for s in reading.samples:
        if s.name == name and s.labels == {"host": "h", **labels}:
            return s.value
    return None


class FakePsutil:
    """Two recorded psutil readings of a host, 10 s apart."""

    def __init__(self):
        self.step = 0

    def virtual_memory(self):
        return SimpleNamespace(total=64 * 2**30, available=40 * 2**30)

    def cpu_times(self):
        t = [(1000.0, 10.0, 300.0, 8000.0, 50.0), (1060.0, 10.0, 310.0, 8020.0, 50.0)][self.step]
        return _Times(*t)

    def disk_io_counters(self, perdisk):
        d = [
            {
                "nvme0n1": _Disk(10_000, 5_000_000, 9_000_000),
                "loop0": _Disk(0, 0, 0),
                "sda": _Disk(1_000, 100, 100),
            },
            {
                "nvme0n1": _Disk(19_500, 55_000_000, 109_000_000),
                "loop0": _Disk(99_999, 0, 0),
                "sda": _Disk(2_000, 100, 100),
            },
        ][self.step]
        return d

    def net_io_counters(self, pernic):
        return [
            {"eth0": _Nic(1_000, 2_000), "lo": _Nic(0, 0)},
            {"eth0": _Nic(1_000 + 125_000_000, 2_000 + 25_000_000), "lo": _Nic(7, 7)},
        ][self.step]


class _Times(tuple):
    def __new__(cls, user, nice, system, idle, iowait):
        obj = super().__new__(cls, (user, nice, system, idle, iowait))
        obj.user, obj.nice, obj.system, obj.idle, obj.iowait = user, nice, system, idle, iowait
        return obj


def _Disk(busy_ms, read, written):  # noqa: N802
    return SimpleNamespace(busy_time=busy_ms, read_bytes=read, write_bytes=written)


def _Nic(rx, tx):  # noqa: N802
    return SimpleNamespace(bytes_recv=rx, bytes_sent=tx)


def test_rates_and_busy_percentages_from_two_readings():
    ps, clock = FakePsutil(), iter([100.0, 110.0])
    source = HostSource(ps, host="h", clock=lambda: next(clock))
    first = source.sample()
    assert _get(first, "node_memory_used_bytes") == 24 * 2**30
    assert _get(first, "node_cpu_utilization_percent") is None  # needs two readings
    ps.step = 1
    second = source.sample()
    # cpu: total +90, idle +20 -> 70/90 busy
    assert _get(second, "node_cpu_utilization_percent") == pytest.approx(100 * 70 / 90)
    assert _get(second, "node_disk_busy_percent", device="nvme0n1") == pytest.approx(95.0)
    assert _get(second, "node_disk_io_utilization_percent") == pytest.approx(95.0)
    assert _get(second, "node_disk_busy_percent", device="loop0") is None
    assert _get(second, "node_disk_read_bytes_per_second", device="nvme0n1") == 5_000_000
    assert _get(second, "node_disk_written_bytes_per_second", device="nvme0n1") == 10_000_000
    assert _get(second, "node_network_receive_bytes_per_second", device="eth0") == 12_500_000
    assert _get(second, "node_network_receive_bytes_per_second") == 12_500_000  # lo excluded
    assert _get(second, "node_network_transmit_bytes_per_second") == 2_500_000


def _burn(seconds: float) -> subprocess.Popen:
    code = f"import time\nend=time.time()+{seconds}\nwhile time.time()<end: pass"
    return subprocess.Popen([sys.executable, "-c", code])


def test_real_psutil_in_range_and_moves_under_load():
    source = HostSource(host="h")
    source.sample()
    time.sleep(0.5)
    idle = source.sample()
    cpu = _get(idle, "node_cpu_utilization_percent")
    assert 0 <= cpu <= 100
    mem = _get(idle, "node_memory_used_bytes")
    assert 0 < mem <= _get(idle, "node_memory_total_bytes")

    # load: every core busy, 20 MB over loopback, 32 MB written and fsynced
    burners = [_burn(1.5) for _ in range(os.cpu_count() or 1)]
    server = socket.create_server(("127.0.0.1", 0))

    def _sink():
        conn, _ = server.accept()
        while conn.recv(1 << 20):
            pass
        conn.close()

    sink = threading.Thread(target=_sink)
    sink.start()
    with socket.create_connection(server.getsockname()) as client:
        client.sendall(b"x" * (20 << 20))
    sink.join()
    server.close()
    with tempfile.NamedTemporaryFile(dir=os.getcwd()) as fh:
        fh.write(os.urandom(32 << 20))
        fh.flush()
        os.fsync(fh.fileno())
    for p in burners:
        p.wait()
    loaded = source.sample()
    assert _get(loaded, "node_cpu_utilization_percent") > 50
    lo_rx = _get(loaded, "node_network_receive_bytes_per_second", device="lo")
    assert lo_rx is not None and lo_rx > 1e6
    written = sum(s.value for s in loaded.samples if s.name == "node_disk_written_bytes_per_second")
    if not written:
        pytest.skip("the block devices here do not count this container's writes")
    assert written > 1e6
