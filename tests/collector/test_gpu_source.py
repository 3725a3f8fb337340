"""GPU source against recorded NVML fakes, and one real-NVML smoke test."""

from __future__ import annotations

import logging
import time

import pytest

from collector.sources.gpu import GpuSource
from tests.collector.fake_nvml import (
    NVML_ERROR_GPU_IS_LOST,
    NVML_ERROR_LIBRARY_NOT_FOUND,
    NVML_ERROR_NO_PERMISSION,
    FakeNvml,
)


def _values(reading, name):
    return {tuple(sorted(s.labels.items())): s.value for s in reading.samples if s.name == name}


def _by_gpu(reading, name):
    return {
        s.labels["gpu"]: s.value
        for s in reading.samples
        if s.name == name and "reason" not in s.labels and "pid" not in s.labels
    }


def test_eight_gpus_every_metric_with_identity_labels():
    nvml = FakeNvml("a100x8.json")
    source = GpuSource(nvml, host="gpu-node-1", xid_events=False)
    reading = source.sample()
    util = _by_gpu(reading, "gpu_utilization_percent")
    assert util == {"0": 35, "1": 41, "2": 38, "3": 92, "4": 30, "5": 97, "6": 44, "7": 0}
    assert _by_gpu(reading, "gpu_memory_total_bytes")["0"] == 81920 * 1024 * 1024
    assert _by_gpu(reading, "gpu_memory_used_bytes")["3"] == 78044 * 1024 * 1024
    assert _by_gpu(reading, "gpu_power_watts")["3"] == pytest.approx(398.0)
    assert _by_gpu(reading, "gpu_temperature_celsius")["5"] == 88
    assert _by_gpu(reading, "gpu_sm_clock_mhz")["5"] == 1080
    assert set(_by_gpu(reading, "gpu_up").values()) == {1}
    sample = next(s for s in reading.samples if s.name == "gpu_utilization_percent")
    assert sample.labels == {
        "host": "gpu-node-1",
        "gpu": "0",
        "gpu_model": "NVIDIA A100-SXM4-80GB",
        "uuid": "GPU-3f4c2a1e-9b7d-4c51-8e2a-0d1b6a7c9000",
    }
    source.close()
    assert nvml.initialised == 0


def test_throttle_reasons_as_bitmask_and_named_flags():
    source = GpuSource(FakeNvml("a100x8.json"), host="h", xid_events=False)
    reading = source.sample()
    assert _by_gpu(reading, "gpu_clock_throttle_reasons_bitmask")["5"] == 0x60
    flags = {
        (s.labels["gpu"], s.labels["reason"]): s.value
        for s in reading.samples
        if s.name == "gpu_clock_throttle"
    }
    assert flags[("5", "sw_thermal_slowdown")] == 1
    assert flags[("5", "hw_thermal_slowdown")] == 1
    assert flags[("5", "sw_power_cap")] == 0
    assert flags[("3", "sw_power_cap")] == 1
    assert flags[("7", "gpu_idle")] == 1
    assert sum(v for (gpu, _), v in flags.items() if gpu == "0") == 0


def test_per_process_memory_where_permitted():
    reading = GpuSource(FakeNvml("a100x8.json"), host="h", xid_events=False).sample()
    procs = {
        (s.labels["gpu"], s.labels["pid"]): s.value
        for s in reading.samples
        if s.name == "gpu_process_memory_used_bytes"
    }
    assert procs[("0", "41230")] == (30210 - 512) * 1024 * 1024
    assert ("2", "51999") not in procs  # usedGpuMemory None: not permitted, no value
    # T4 recording: GPU 0 forbids the process list, GPU 1 does not support power
    t4 = GpuSource(FakeNvml("t4x2.json"), host="h", xid_events=False).sample()
    assert {s.labels["gpu"] for s in t4.samples if s.name == "gpu_process_memory_used_bytes"} == {
        "1"
    }
    assert _by_gpu(t4, "gpu_power_watts") == {"0": pytest.approx(68.8)}
    assert _by_gpu(t4, "gpu_up") == {"0": 1, "1": 1}


def test_real_h200_recordings_idle_and_under_load():
    idle = GpuSource(FakeNvml("h200x1-idle.json"), host="h", xid_events=False).sample()
    busy = GpuSource(FakeNvml("h200x1.json"), host="h", xid_events=False).sample()
    assert _by_gpu(idle, "gpu_utilization_percent") == {"0": 0}
    assert _by_gpu(busy, "gpu_utilization_percent") == {"0": 99}
    assert _by_gpu(busy, "gpu_memory_total_bytes") == {"0": 150754820096}
    assert _by_gpu(busy, "gpu_power_watts")["0"] == pytest.approx(694.003)
    assert _by_gpu(idle, "gpu_power_watts")["0"] == pytest.approx(80.212)
    # used as nvidia-smi shows it (0 MiB idle), the driver's 615 MiB apart
    assert _by_gpu(idle, "gpu_memory_used_bytes") == {"0": 0}
    assert _by_gpu(busy, "gpu_memory_used_bytes") == {"0": 26963935232}
    assert _by_gpu(idle, "gpu_memory_reserved_bytes") == {"0": 644939776}
    assert _by_gpu(busy, "gpu_sm_clock_mhz")["0"] > _by_gpu(idle, "gpu_sm_clock_mhz")["0"]

    def flags(reading):
        return {
            s.labels["reason"]
            for s in reading.samples
            if s.name == "gpu_clock_throttle" and s.value
        }

    assert flags(idle) == {"gpu_idle"}
    assert flags(busy) == {"sw_power_cap"}  # 700 W cap reached by bf16 matmuls
    procs = {
        s.labels["pid"]: s.value for s in busy.samples if s.name == "gpu_process_memory_used_bytes"
    }
    assert procs == {"548": 26954694656}
    assert not [s for s in idle.samples if s.name == "gpu_process_memory_used_bytes"]
    model = {s.labels["gpu_model"] for s in busy.samples if s.name == "gpu_up"}
    assert model == {"NVIDIA H200"}


def test_a_driver_without_the_v2_memory_call_reads_version_1_once_told(caplog):
    caplog.set_level(logging.INFO)
    nvml = FakeNvml("a100x8.json")  # recorded with no v2 memory answer: Function Not Found
    source = GpuSource(nvml, host="h", xid_events=False)
    first, second = source.sample(), source.sample()
    for reading in (first, second):
        assert _by_gpu(reading, "gpu_memory_used_bytes")["3"] == 78044 * 1024 * 1024
        assert not _by_gpu(reading, "gpu_memory_reserved_bytes")
    told = [r for r in caplog.records if "memory info v2 not available" in r.getMessage()]
    assert len(told) == 1


def test_memory_hidden_from_the_agent_is_left_out_like_any_field():
    nvml = FakeNvml("h200x1.json")
    nvml.devices[0]["errors"]["nvmlDeviceGetMemoryInfo"] = NVML_ERROR_NO_PERMISSION
    reading = GpuSource(nvml, host="h", xid_events=False).sample()
    assert _by_gpu(reading, "gpu_up") == {"0": 1}
    assert not _by_gpu(reading, "gpu_memory_used_bytes")
    assert _by_gpu(reading, "gpu_utilization_percent") == {"0": 99}


def test_a_lost_gpu_is_not_taken_for_an_old_driver():
    nvml = FakeNvml("h200x1.json")
    source = GpuSource(nvml, host="h", xid_events=False)
    nvml.devices[0]["errors"]["*"] = NVML_ERROR_GPU_IS_LOST
    assert _by_gpu(source.sample(), "gpu_up") == {"0": 0}
    nvml.devices[0]["errors"].clear()
    back = source.sample()
    assert _by_gpu(back, "gpu_up") == {"0": 1}
    assert _by_gpu(back, "gpu_memory_reserved_bytes") == {"0": 644939776}  # still version 2


@pytest.mark.parametrize("code", [NVML_ERROR_LIBRARY_NOT_FOUND, 9])
def test_missing_library_or_driver_logs_once_and_yields_nothing(caplog, code):
    caplog.set_level(logging.WARNING)
    source = GpuSource(FakeNvml("a100x8.json", init_error=code), host="h")
    assert not source.available
    assert source.sample().samples == []
    lines = [r for r in caplog.records if "NVML is not available" in r.getMessage()]
    assert len(lines) == 1 and "other sources carry on" in lines[0].getMessage()
    source.close()


def test_gpu_lost_mid_run_marks_it_down_keeps_the_others():
    nvml = FakeNvml("a100x8.json")
    source = GpuSource(nvml, host="h", xid_events=False)
    assert len(_by_gpu(source.sample(), "gpu_utilization_percent")) == 8
    nvml.devices[4]["errors"]["*"] = NVML_ERROR_GPU_IS_LOST
    second = source.sample()
    assert "4" not in _by_gpu(second, "gpu_utilization_percent")
    assert len(_by_gpu(second, "gpu_utilization_percent")) == 7
    assert _by_gpu(second, "gpu_up")["4"] == 0
    assert [e.kind for e in second.events] == ["gpu_error"]
    assert "GPU is lost" in second.events[0].summary
    third = source.sample()
    assert third.events == []  # one event per outage, not one per round
    nvml.devices[4]["errors"].clear()
    assert _by_gpu(source.sample(), "gpu_up")["4"] == 1


def test_gpu_unreadable_at_start_does_not_stop_the_others():
    nvml = FakeNvml("a100x8.json")
    nvml.devices[2]["errors"]["nvmlDeviceGetUUID"] = NVML_ERROR_GPU_IS_LOST
    source = GpuSource(nvml, host="h")
    reading = source.sample()
    source.close()
    assert _by_gpu(reading, "gpu_up")["2"] == 0
    assert len(_by_gpu(reading, "gpu_utilization_percent")) == 7
    assert 2 not in nvml.registered and len(nvml.registered) == 7
    assert [e.kind for e in reading.events] == ["gpu_error"]


def test_xid_critical_error_arrives_as_an_event_not_a_gauge():
    nvml = FakeNvml("a100x8.json")
    source = GpuSource(nvml, host="gpu-node-1", wallclock=lambda: 1733131230.0)
    assert nvml.registered == list(range(8))
    nvml.fire_recorded_xids()
    deadline = time.monotonic() + 5
    events = []
    while not events and time.monotonic() < deadline:
        events = source.sample().events
        time.sleep(0.05)
    source.close()
    assert len(events) == 1
    event = events[0]
    assert event.kind == "gpu_xid"
    assert event.labels["gpu"] == "5" and event.labels["xid"] == "79"
    assert event.summary == "XID 79 on GPU 5 of gpu-node-1"
    assert event.id == "xid-gpu-node-1-5-79-1733131230000"
    assert not [s for s in source.sample().samples if "xid" in s.name]


@pytest.mark.gpu
def test_real_nvml_reads_every_gpu():
    pynvml = pytest.importorskip("pynvml")
    try:
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        pynvml.nvmlShutdown()
    except pynvml.NVMLError as exc:
        pytest.skip(f"NVML is absent here: {exc}")
    source = GpuSource(host="smoke")
    try:
        reading = source.sample()
    finally:
        source.close()
    util = _by_gpu(reading, "gpu_utilization_percent")
    assert len(util) == count
    assert all(0 <= v <= 100 for v in util.values())
    total = _by_gpu(reading, "gpu_memory_total_bytes")
    assert all(v > 0 for v in total.values())
    used, reserved = (_by_gpu(reading, f"gpu_memory_{k}_bytes") for k in ("used", "reserved"))
    assert all(used[g] + reserved.get(g, 0) <= total[g] for g in total)
    for s in sorted(reading.samples, key=lambda s: (s.name, s.labels.get("gpu", ""))):
        print(s.name, s.labels.get("gpu"), s.labels.get("reason", ""), s.value)
