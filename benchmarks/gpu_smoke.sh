#!/usr/bin/env bash
# GPU smoke test for a machine with NVIDIA GPUs and a driver:
#   1. runs the `gpu`-marked test (real NVML through nvidia-ml-py),
#   2. prints one real reading of every GPU as the agent sees it,
#   3. with --record FILE, writes the readings in the recorded-fake format of
#      tests/fixtures/collector/nvml/ so the unit tests can replay this card.
# Usage: benchmarks/gpu_smoke.sh [--record tests/fixtures/collector/nvml/h200x1.json]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3

echo "== gpu-marked test"
"$PY" -m pytest -q -m gpu -rs -s tests/collector/test_gpu_source.py

echo "== one reading of every GPU"
"$PY" -m causeline.cli agent --once --print --sources gpu --host "$(hostname)" \
  | grep -E '^gpu_' | grep -v 'gpu_clock_throttle{' || true

if [ "${1:-}" = "--record" ] && [ -n "${2:-}" ]; then
  "$PY" - "$2" <<'PY'
import json, sys
import pynvml as n
n.nvmlInit()
def text(v): return v.decode() if isinstance(v, bytes) else str(v)
def call(fn, *a):
    try:
        return fn(*a), None
    except n.NVMLError as e:
        return None, e.value
devices = []
for i in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(i)
    errors = {}
    def get(name, *a):
        value, err = call(getattr(n, name), h, *a)
        if err is not None:
            errors[name] = err
        return value
    util = get("nvmlDeviceGetUtilizationRates")
    mem = get("nvmlDeviceGetMemoryInfo")
    # version 2 (the driver's reservation apart); absent where the driver lacks it
    mem2 = call(n.nvmlDeviceGetMemoryInfo, h, n.nvmlMemory_v2)[0] if hasattr(n, "nvmlMemory_v2") else None
    procs = get("nvmlDeviceGetComputeRunningProcesses") or []
    devices.append({
        "name": text(n.nvmlDeviceGetName(h)), "uuid": text(n.nvmlDeviceGetUUID(h)),
        "utilization": {"gpu": util.gpu, "memory": util.memory} if util else {"gpu": 0, "memory": 0},
        "memory": {"total": mem.total, "used": mem.used, "free": mem.free} if mem else {},
        **({"memory_v2": {k: getattr(mem2, k) for k in ("total", "reserved", "free", "used")}}
           if mem2 else {}),
        "temperature": get("nvmlDeviceGetTemperature", n.NVML_TEMPERATURE_GPU),
        "power_mw": get("nvmlDeviceGetPowerUsage"),
        "sm_clock_mhz": get("nvmlDeviceGetClockInfo", n.NVML_CLOCK_SM),
        "clock_event_reasons": get(
            "nvmlDeviceGetCurrentClocksEventReasons"
            if hasattr(n, "nvmlDeviceGetCurrentClocksEventReasons")
            else "nvmlDeviceGetCurrentClocksThrottleReasons"
        ),
        "processes": [{"pid": p.pid, "usedGpuMemory": p.usedGpuMemory} for p in procs],
        "errors": errors,
    })
doc = {"driver_version": text(n.nvmlSystemGetDriverVersion()),
       "cuda_driver_version": n.nvmlSystemGetCudaDriverVersion(),
       "devices": devices, "xid_events": []}
n.nvmlShutdown()
with open(sys.argv[1], "w") as fh:
    json.dump(doc, fh, indent=1)
print(f"recorded {len(devices)} GPU(s) to {sys.argv[1]}")
PY
fi
