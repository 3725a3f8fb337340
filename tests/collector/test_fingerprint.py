"""Environment fingerprint: collection with injected handles, the pure diff, the CLI."""

from __future__ import annotations

import json
from importlib import metadata

from causeline.cli import main
from collector.fingerprint import collect_fingerprint, diff_fingerprints, fingerprint_hash
from tests.collector.fake_nvml import FakeNvml

CPUINFO_AVX512 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu sse4_1 sse4_2 avx avx2 fma f16c avx512f avx512bw avx512_vnni amx_tile
"""
CPUINFO_OLD = """processor\t: 0
model name\t: Intel(R) Xeon(R) CPU E5-2680 v2 @ 2.80GHz
flags\t\t: fpu sse4_1 sse4_2 avx
"""


class FakeMetadata:
    PackageNotFoundError = metadata.PackageNotFoundError

    def __init__(self, versions):
        self.versions = versions

    def version(self, name):
        if name not in self.versions:
            raise metadata.PackageNotFoundError(name)
        return self.versions[name]


def _fp(tmp_path, cpuinfo, nvml, versions):
    path = tmp_path / f"cpuinfo-{len(cpuinfo)}"
    path.write_text(cpuinfo)
    return collect_fingerprint(
        nvml=nvml,
        packages=["torch", "numpy", "onnxruntime"],
        metadata=FakeMetadata(versions),
        cpuinfo_path=str(path),
    )


def test_collect_reads_gpu_cpu_and_packages(tmp_path):
    fp = _fp(
        tmp_path, CPUINFO_AVX512, FakeNvml("a100x8.json"), {"torch": "2.3.1", "numpy": "1.26.4"}
    )
    assert fp["gpu"]["driver_version"] == "535.129.03"
    assert fp["gpu"]["cuda_driver_version"] == "12.2"
    assert fp["gpu"]["count"] == 8 and fp["gpu"]["devices"][0]["name"] == "NVIDIA A100-SXM4-80GB"
    assert fp["cpu"]["model"] == "Intel(R) Xeon(R) Platinum 8480+"
    assert "avx512f" in fp["cpu"]["simd"] and "amx_tile" in fp["cpu"]["simd"]
    assert fp["packages"] == {"torch": "2.3.1", "numpy": "1.26.4", "onnxruntime": None}
    assert fp["python"]["version"]
    assert fingerprint_hash(fp) == fingerprint_hash(json.loads(json.dumps(fp)))


def test_no_driver_is_recorded_not_raised(tmp_path):
    fp = _fp(tmp_path, CPUINFO_OLD, FakeNvml("t4x2.json", init_error=9), {})
    assert fp["gpu"] == {"available": False, "reason": "Driver Not Loaded"}


def test_diff_names_gpu_driver_cuda_flags_and_packages(tmp_path):
    train = _fp(
        tmp_path, CPUINFO_AVX512, FakeNvml("a100x8.json"), {"torch": "2.3.1", "numpy": "1.26.4"}
    )
    serve = _fp(
        tmp_path,
        CPUINFO_OLD,
        FakeNvml("t4x2.json"),
        {"torch": "2.1.0", "numpy": "1.26.4", "onnxruntime": "1.17.0"},
    )
    diffs = {
        (d.path, json.dumps(d.a), json.dumps(d.b)): d.kind for d in diff_fingerprints(train, serve)
    }
    assert diffs[("gpu.driver_version", '"535.129.03"', '"470.223.02"')] == "changed"
    assert diffs[("gpu.cuda_driver_version", '"12.2"', '"11.4"')] == "changed"
    assert diffs[("gpu.devices[0].name", '"NVIDIA A100-SXM4-80GB"', '"Tesla T4"')] == "changed"
    assert diffs[("gpu.devices[7].name", '"NVIDIA A100-SXM4-80GB"', "null")] == "removed"
    assert diffs[("cpu.simd", '"avx2"', "null")] == "removed"
    assert diffs[("cpu.simd", '"avx512f"', "null")] == "removed"
    assert diffs[("packages.torch", '"2.3.1"', '"2.1.0"')] == "changed"
    assert diffs[("packages.onnxruntime", "null", '"1.17.0"')] == "added"
    assert not any(p == "packages.numpy" for p, _, _ in diffs)
    assert diff_fingerprints(train, train) == []


def test_diff_of_arbitrary_nested_documents():
    a = {"x": {"y": 1, "z": [1, 2]}, "only_a": True}
    b = {"x": {"y": 2, "z": [2, 3]}, "only_b": "v"}
    assert [d.to_json() for d in diff_fingerprints(a, b)] == [
        {"path": "only_a", "a": True, "b": None, "kind": "removed"},
        {"path": "only_b", "a": None, "b": "v", "kind": "added"},
        {"path": "x.y", "a": 1, "b": 2, "kind": "changed"},
        {"path": "x.z", "a": 1, "b": None, "kind": "removed"},
        {"path": "x.z", "a": None, "b": 3, "kind": "added"},
    ]


def test_env_diff_cli_on_files(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"gpu": {"driver_version": "535"}, "packages": {"torch": "2.3"}}))
    b.write_text(
        json.dumps(
            {
                "host": "n2",
                "ts": 1.0,
                "fingerprint": {"gpu": {"driver_version": "470"}, "packages": {"torch": "2.3"}},
            }
        )
    )
    assert main(["env", "diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "gpu.driver_version  535  ->  470" in out and "torch" not in out
    assert main(["env", "diff", str(a), str(a)]) == 0
    assert main(["env", "diff", str(a), str(b), "--json"]) == 1
    assert json.loads(capsys.readouterr().out.split("\n", 1)[1])["differences"][0]["b"] == "470"


def test_env_diff_cli_unknown_host_without_server(tmp_path, capsys):
    assert main(["env", "diff", "gpu-node-1", "gpu-node-2"]) == 2
    assert "pass --server" in capsys.readouterr().err
