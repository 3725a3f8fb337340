"""A recorded fake of the ``pynvml`` module (nvidia-ml-py): same names, same return shapes."""

from __future__ import annotations

import json
import queue
from pathlib import Path
from types import SimpleNamespace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "collector" / "nvml"

NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_GPU_IS_LOST = 15
NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1
nvmlEventTypeXidCriticalError = 8
nvmlMemory_v2 = 0x02000028
MESSAGES = {
    3: "Not Supported",
    4: "Insufficient Permissions",
    9: "Driver Not Loaded",
    10: "Timeout",
    12: "NVML Shared Library Not Found",
    13: "Function Not Found",
    15: "GPU is lost",
}


class NVMLError(Exception):
    """Same shape as pynvml.NVMLError: the code is ``value``."""

    def __init__(self, value: int):
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return MESSAGES.get(self.value, f"Unknown Error {self.value}")


class FakeNvml:
    """Module-like object; ``init_error`` simulates a missing library or driver."""

    NVMLError = NVMLError

    def __init__(self, recording: str | dict, *, init_error: int | None = None):
        data = (
            json.loads((FIXTURES / recording).read_text())
            if isinstance(recording, str)
            else recording
        )
        self.driver_version = data["driver_version"]
        self.cuda_driver_version = data["cuda_driver_version"]
        self.devices = data["devices"]
        self.init_error = init_error
        self.initialised = 0
        self.events: queue.Queue = queue.Queue()
        self._xid_plan = data.get("xid_events", [])
        self.registered: list[int] = []
        for name, value in globals().items():
            if name.startswith(("NVML_", "nvmlEventType", "nvmlMemory_")):
                setattr(self, name, value)

    # library
    def nvmlInit(self):
        if self.init_error is not None:
            raise NVMLError(self.init_error)
        self.initialised += 1

    def nvmlShutdown(self):
        self.initialised -= 1

    def nvmlSystemGetDriverVersion(self):
        return self.driver_version

    def nvmlSystemGetCudaDriverVersion(self):
        return self.cuda_driver_version

    def nvmlDeviceGetCount(self):
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index):
        return SimpleNamespace(index=index)

    def nvmlDeviceGetIndex(self, handle):
        return handle.index

    def _dev(self, handle, fn: str):
        dev = self.devices[handle.index]
        code = dev.get("errors", {}).get(fn, dev.get("errors", {}).get("*"))
        if code is not None:
            raise NVMLError(code)
        return dev

    # per device
    def nvmlDeviceGetName(self, h):
        return self._dev(h, "nvmlDeviceGetName")["name"]

    def nvmlDeviceGetUUID(self, h):
        return self._dev(h, "nvmlDeviceGetUUID")["uuid"]

    def nvmlDeviceGetUtilizationRates(self, h):
        return SimpleNamespace(**self._dev(h, "nvmlDeviceGetUtilizationRates")["utilization"])

    def nvmlDeviceGetMemoryInfo(self, h, version=None):
        device = self._dev(h, "nvmlDeviceGetMemoryInfo")
        if version is None:
            return SimpleNamespace(**device["memory"])
        assert version == nvmlMemory_v2
        if "memory_v2" not in device:  # recorded with a driver that lacks the v2 call
            raise NVMLError(NVML_ERROR_FUNCTION_NOT_FOUND)
        return SimpleNamespace(**device["memory_v2"])

    def nvmlDeviceGetTemperature(self, h, sensor):
        assert sensor == NVML_TEMPERATURE_GPU
        return self._dev(h, "nvmlDeviceGetTemperature")["temperature"]

    def nvmlDeviceGetPowerUsage(self, h):
        return self._dev(h, "nvmlDeviceGetPowerUsage")["power_mw"]

    def nvmlDeviceGetClockInfo(self, h, clock):
        assert clock == NVML_CLOCK_SM
        return self._dev(h, "nvmlDeviceGetClockInfo")["sm_clock_mhz"]

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return self._dev(h, "nvmlDeviceGetCurrentClocksEventReasons")["clock_event_reasons"]

    nvmlDeviceGetCurrentClocksThrottleReasons = nvmlDeviceGetCurrentClocksEventReasons

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        procs = self._dev(h, "nvmlDeviceGetComputeRunningProcesses")["processes"]
        return [SimpleNamespace(pid=p["pid"], usedGpuMemory=p["usedGpuMemory"]) for p in procs]

    # events
    def nvmlEventSetCreate(self):
        return SimpleNamespace(kind="event-set")

    def nvmlDeviceRegisterEvents(self, h, types, event_set):
        self._dev(h, "nvmlDeviceRegisterEvents")
        assert types == nvmlEventTypeXidCriticalError
        self.registered.append(h.index)

    def nvmlEventSetWait_v2(self, event_set, timeout_ms):
        try:
            return self.events.get(timeout=timeout_ms / 1000)
        except queue.Empty:
            raise NVMLError(NVML_ERROR_TIMEOUT) from None

    def nvmlEventSetFree(self, event_set):
        pass

    def fire_recorded_xids(self):
        """Deliver the recording's XID events to the waiting thread."""
        for ev in self._xid_plan:
            self.events.put(
                SimpleNamespace(
                    device=SimpleNamespace(index=ev["gpu"]),
                    eventType=nvmlEventTypeXidCriticalError,
                    eventData=ev["xid"],
                )
            )
