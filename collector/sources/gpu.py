"""GPU metrics through NVML (``nvidia-ml-py``): one series set per GPU.

The ``nvml`` handle is the ``pynvml`` module or a recorded fake with the same
function names. No library or driver: one log line and no samples. An NVML
error on one GPU marks that GPU down (``gpu_up 0``); the others carry on.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable

from collector.reading import Reading
from collector.schema import Event
from collector.sources.gpu_xid import XidWatcher

log = logging.getLogger(__name__)

# NVML clock event (throttle) reason bits and the flag names we export.
THROTTLE_REASONS = {
    "gpu_idle": 0x1,
    "applications_clocks_setting": 0x2,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80,
    "display_clock_setting": 0x100,
}
SKIPPED_FIELD_ERRORS = ("NVML_ERROR_NOT_SUPPORTED", "NVML_ERROR_NO_PERMISSION")
# A driver without the version-2 memory call answers it with these: read version 1 instead.
OLD_DRIVER_ERRORS = (
    "NVML_ERROR_FUNCTION_NOT_FOUND",
    "NVML_ERROR_NOT_SUPPORTED",
    "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
)


class _Unreadable:
    """Stands for a GPU whose handle NVML refused at start."""

    def __init__(self, index: int):
        self.index = index


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class GpuSource:
    """Sample every GPU on the host through NVML."""

    name = "gpu"

    def __init__(
        self,
        nvml=None,
        *,
        host: str,
        xid_events: bool = True,
        wallclock: Callable[[], float] = time.time,
    ):
        if nvml is None:
            import pynvml

            nvml = pynvml
        self._nvml = nvml
        self._host = host
        self._wallclock = wallclock
        self._handles: list = []
        self._labels: list[dict[str, str]] = []
        self._down: set[int] = set()
        self._pending_events: list[Event] = []
        self._xid: XidWatcher | None = None
        self.available = False
        self._skip_codes = {getattr(nvml, n) for n in SKIPPED_FIELD_ERRORS if hasattr(nvml, n)}
        self._old_codes = {getattr(nvml, n) for n in OLD_DRIVER_ERRORS if hasattr(nvml, n)}
        self._memory_v2 = getattr(nvml, "nvmlMemory_v2", None)
        self._start(xid_events)

    def _start(self, xid_events: bool) -> None:
        nvml = self._nvml
        try:
            nvml.nvmlInit()
            count = nvml.nvmlDeviceGetCount()
        except nvml.NVMLError as exc:
            log.warning("no GPU metrics: NVML is not available (%s); other sources carry on", exc)
            return
        for index in range(count):
            labels = {"host": self._host, "gpu": str(index), "uuid": "", "gpu_model": ""}
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
                labels["uuid"] = _text(nvml.nvmlDeviceGetUUID(handle))
                labels["gpu_model"] = _text(nvml.nvmlDeviceGetName(handle))
            except nvml.NVMLError as exc:
                log.error("GPU %d unreadable at start (%s); reported as gpu_up 0", index, exc)
                handle = _Unreadable(index)
            self._handles.append(handle)
            self._labels.append(labels)
        self.available = True
        log.info("NVML: %d GPU(s): %s", count, ", ".join(x["gpu_model"] for x in self._labels))
        if xid_events and count:
            try:
                self._xid = XidWatcher(
                    nvml,
                    [None if isinstance(h, _Unreadable) else h for h in self._handles],
                    host=self._host,
                    labels_of=self._labels_of,
                    wallclock=self._wallclock,
                )
                self._xid.start()
            except nvml.NVMLError as exc:
                log.info("XID events not available: %s", exc)

    def _labels_of(self, index: int) -> dict[str, str]:
        if 0 <= index < len(self._labels):
            return {k: v for k, v in self._labels[index].items() if k != "host"}
        return {"gpu": str(index)}

    def _field(self, fn, *args):
        try:
            return fn(*args)
        except self._nvml.NVMLError as exc:
            if getattr(exc, "value", None) in self._skip_codes:
                return None
            raise

    def sample(self) -> Reading:
        """Read every GPU; a failing GPU reports ``gpu_up 0`` and an event once."""
        out = Reading()
        for index, handle in enumerate(self._handles):
            labels = self._labels[index]
            try:
                if isinstance(handle, _Unreadable):
                    raise self._nvml.NVMLError(self._nvml.NVML_ERROR_GPU_IS_LOST)
                self._sample_device(handle, labels, out)
            except self._nvml.NVMLError as exc:
                out.add("gpu_up", 0, labels)
                if index not in self._down:
                    self._down.add(index)
                    self._device_event(index, labels, f"GPU {index} unreadable: {exc}")
                continue
            if index in self._down:
                self._down.discard(index)
                log.info("GPU %d readable again", index)
            out.add("gpu_up", 1, labels)
        if self._xid:
            out.events.extend(self._xid.drain())
        out.events.extend(self._pending_events)
        self._pending_events = []
        return out

    def _device_event(self, index: int, labels: dict[str, str], summary: str) -> None:
        ts = self._wallclock()
        log.error("%s on %s", summary, self._host)
        self._pending_events.append(
            Event(
                id=f"gpu-down-{self._host}-{index}-{int(ts * 1000)}",
                ts=ts,
                kind="gpu_error",
                summary=f"{summary} on {self._host}",
                labels=dict(labels),
            )
        )

    def _sample_device(self, handle, labels: dict[str, str], out: Reading) -> None:
        nvml, field = self._nvml, self._field
        util = field(nvml.nvmlDeviceGetUtilizationRates, handle)
        if util is not None:
            out.add("gpu_utilization_percent", util.gpu, labels)
            out.add("gpu_memory_utilization_percent", util.memory, labels)
        mem = self._memory(handle)
        if mem is not None:
            out.add("gpu_memory_used_bytes", mem.used, labels)
            out.add("gpu_memory_total_bytes", mem.total, labels)
            if hasattr(mem, "reserved"):
                out.add("gpu_memory_reserved_bytes", mem.reserved, labels)
        temp = field(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
        if temp is not None:
            out.add("gpu_temperature_celsius", temp, labels)
        power = field(nvml.nvmlDeviceGetPowerUsage, handle)
        if power is not None:
            out.add("gpu_power_watts", power / 1000.0, labels)
        clock = field(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM)
        if clock is not None:
            out.add("gpu_sm_clock_mhz", clock, labels)
        reasons_fn = (
            getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
            or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
        )
        reasons = field(reasons_fn, handle)
        if reasons is not None:
            out.add("gpu_clock_throttle_reasons_bitmask", reasons, labels)
            for name, bit in THROTTLE_REASONS.items():
                out.add("gpu_clock_throttle", 1 if reasons & bit else 0, {**labels, "reason": name})
        procs = field(nvml.nvmlDeviceGetComputeRunningProcesses, handle)
        for proc in procs or ():
            used = getattr(proc, "usedGpuMemory", None)
            if used is not None:
                out.add("gpu_process_memory_used_bytes", used, {**labels, "pid": str(proc.pid)})

    def _memory(self, handle):
        """Read memory as ``nvidia-smi`` and DCGM do: the driver's reservation apart (v2)."""
        if self._memory_v2 is not None:
            try:
                return self._nvml.nvmlDeviceGetMemoryInfo(handle, version=self._memory_v2)
            except self._nvml.NVMLError as exc:
                code = getattr(exc, "value", None)
                if code in self._skip_codes and code not in self._old_codes:
                    return None  # refused on this GPU, like any field
                if code not in self._old_codes:
                    raise
                log.info("NVML memory info v2 not available (%s); used memory counts reserved", exc)
                self._memory_v2 = None
        return self._field(self._nvml.nvmlDeviceGetMemoryInfo, handle)

    def close(self) -> None:
        """Stop the XID thread and shut NVML down."""
        if self._xid:
            self._xid.close()
        if self.available:
            with contextlib.suppress(self._nvml.NVMLError):
                self._nvml.nvmlShutdown()
