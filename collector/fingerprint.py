"""Environment fingerprint of a host (F4) and the diff of two fingerprints.

A fingerprint is nested JSON: GPU model, driver and CUDA versions, CPU model
and SIMD flags, OS and kernel, Python and the versions of chosen packages.
``diff_fingerprints`` is pure: it compares any two such documents.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import platform
from dataclasses import dataclass
from importlib import metadata as importlib_metadata

log = logging.getLogger(__name__)
DEFAULT_PACKAGES = (
    "torch",
    "numpy",
    "onnxruntime",
    "onnxruntime-gpu",
    "tensorrt",
    "transformers",
    "vllm",
    "tritonclient",
    "scikit-learn",
    "xgboost",
    "lightgbm",
    "tensorflow",
    "jax",
)
SIMD_FLAGS = (
    "sse4_1",
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512cd",
    "avx512dq",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "neon",
    "asimd",
    "sve",
)
MISSING = object()


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference: ``a`` or ``b`` is None when the path exists on one side only."""

    path: str
    a: object
    b: object

    @property
    def kind(self) -> str:
        """Return ``added`` (only in b), ``removed`` (only in a) or ``changed``."""
        if self.a is None:
            return "added"
        if self.b is None:
            return "removed"
        return "changed"

    def to_json(self) -> dict:
        """Return the JSON form."""
        return {"path": self.path, "a": self.a, "b": self.b, "kind": self.kind}


def _flatten(value, path: str, out: dict) -> None:
    if isinstance(value, dict):
        for key in value:
            _flatten(value[key], f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        out[path] = frozenset(json.dumps(v) for v in value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", out)
    else:
        out[path] = value


def diff_fingerprints(a: dict, b: dict) -> list[Difference]:
    """Return the differences between two fingerprints, sorted by path.

    Lists of plain values (CPU flags) are compared as sets: each item present
    on one side only is one difference at ``path`` (e.g. ``cpu.flags``).
    """
    fa: dict[str, object] = {}
    fb: dict[str, object] = {}
    _flatten(a, "", fa)
    _flatten(b, "", fb)
    out: list[Difference] = []
    for path in sorted(set(fa) | set(fb)):
        va, vb = fa.get(path, MISSING), fb.get(path, MISSING)
        if isinstance(va, frozenset) or isinstance(vb, frozenset):
            sa = va if isinstance(va, frozenset) else frozenset()
            sb = vb if isinstance(vb, frozenset) else frozenset()
            for item in sorted(sa - sb):
                out.append(Difference(path, json.loads(item), None))
            for item in sorted(sb - sa):
                out.append(Difference(path, None, json.loads(item)))
        elif va != vb:
            out.append(
                Difference(path, None if va is MISSING else va, None if vb is MISSING else vb)
            )
    return out


def fingerprint_hash(fingerprint: dict) -> str:
    """Return a stable hash of a fingerprint (to send it only when it changes)."""
    text = json.dumps(fingerprint, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _cpu(cpuinfo_path: str) -> dict:
    model = platform.processor() or platform.machine()
    flags: set[str] = set()
    try:
        with open(cpuinfo_path) as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "Model", "Hardware") and model in ("", platform.machine()):
                    model = value.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return {
        "model": model,
        "logical_cores": os.cpu_count(),
        "arch": platform.machine(),
        "simd": sorted(f for f in SIMD_FLAGS if f in flags),
        "flags": sorted(flags),
    }


def _os_release(path: str) -> str | None:
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def _gpu(nvml) -> dict:
    if nvml is None:
        try:
            import pynvml
        except ImportError:
            return {"available": False, "reason": "nvidia-ml-py not installed"}
        nvml = pynvml
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        return {"available": False, "reason": str(exc)}
    try:

        def text(v):
            return v.decode() if isinstance(v, bytes) else str(v)

        cuda = nvml.nvmlSystemGetCudaDriverVersion()
        devices = []
        for i in range(nvml.nvmlDeviceGetCount()):
            h = nvml.nvmlDeviceGetHandleByIndex(i)
            devices.append(
                {
                    "name": text(nvml.nvmlDeviceGetName(h)),
                    "memory_total_bytes": nvml.nvmlDeviceGetMemoryInfo(h).total,
                }
            )
        return {
            "available": True,
            "driver_version": text(nvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": f"{cuda // 1000}.{cuda % 1000 // 10}",
            "count": len(devices),
            "devices": devices,
        }
    except nvml.NVMLError as exc:
        return {"available": False, "reason": str(exc)}
    finally:
        with contextlib.suppress(nvml.NVMLError):
            nvml.nvmlShutdown()


def _packages(names, metadata) -> dict:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def collect_fingerprint(
    *,
    nvml=None,
    packages=DEFAULT_PACKAGES,
    metadata=importlib_metadata,
    cpuinfo_path: str = "/proc/cpuinfo",
    os_release_path: str = "/etc/os-release",
) -> dict:
    """Return this host's environment fingerprint."""
    return {
        "os": {
            "system": platform.system(),
            "kernel": platform.release(),
            "distribution": _os_release(os_release_path),
        },
        "cpu": _cpu(cpuinfo_path),
        "gpu": _gpu(nvml),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
        },
        "packages": _packages(packages, metadata),
    }
