"""A gzip bomb in a bundle is refused while it inflates, before it can take the memory."""

from __future__ import annotations

import gzip
import shutil
import tracemalloc
import zlib

import pytest

from causeline.cli import main
from correlator.bundle import BundleError, inflate
from tests.conftest import scenarios_dir

BUNDLE = scenarios_dir() / "public" / "01-input-length-drift"


def _copy(tmp_path):
    dest = tmp_path / "bundle"
    shutil.copytree(BUNDLE, dest)
    for f in dest.iterdir():
        f.chmod(0o644)
    return dest


def _gzip_stream(head: bytes, block: bytes, count: int, tail: bytes) -> bytes:
    """Return one gzip member of head + block * count + tail, built without holding it."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [deflate.compress(head)]
    parts += [deflate.compress(block) for _ in range(count)]
    return b"".join([*parts, deflate.compress(tail), deflate.flush()])


def _json_bomb(mib: int) -> bytes:
    """Return valid query_range JSON of about ``mib`` MiB, a few hundred times smaller gzipped."""
    head = b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":'
    head += b'{"__name__":"x"},"values":['
    block = b'[1733120000,"1"],' * (1 << 16)
    return _gzip_stream(head, block, mib * (1 << 20) // len(block), b'[1733120000,"1"]]}]}}')


def test_import_refuses_a_json_bomb_inside_the_size_cap(tmp_path, capsys):
    bad = _copy(tmp_path)
    bomb = _json_bomb(24)
    assert len(bomb) < 200_000
    (bad / "metrics.json.gz").write_bytes(bomb)
    db_url = f"sqlite:///{tmp_path / 'c.db'}"
    capsys.readouterr()
    assert main(["import", str(bad), "--database-url", db_url]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert "metrics.json.gz:" in err and "times its" in err and "gunzip" in err, err
    assert err.endswith("nothing was imported"), err


def test_a_genuine_bundle_still_imports(tmp_path):
    assert main(["import", str(BUNDLE), "--database-url", f"sqlite:///{tmp_path / 'c.db'}"]) == 0


def test_plain_text_compressed_a_few_times_inflates_whole():
    text = b'[1733120000,"0.25"],' * 2_000_000  # 40 MB, past the ratio-free size
    assert inflate(gzip.compress(text), "x.json.gz", 64 << 20, max_ratio=10_000) == text


def test_the_ratio_bound_and_the_size_it_starts_at_are_parameters():
    raw = _gzip_stream(b"", b"\0" * (1 << 20), 4, b"")  # 4 MiB of zeros in ~4 KB
    with pytest.raises(BundleError, match="x.gz: inflates to more than 100 times its"):
        inflate(raw, "x.gz", 64 << 20, max_ratio=100, ratio_free=1 << 20)
    assert len(inflate(raw, "x.gz", 64 << 20, max_ratio=100, ratio_free=8 << 20)) == 4 << 20
    with pytest.raises(BundleError, match="inflates to more than 2097152 bytes"):
        inflate(raw, "x.gz", 2 << 20, max_ratio=10_000)


def test_a_bomb_is_stopped_before_it_inflates_whole():
    raw = _gzip_stream(b"", b"\0" * (1 << 20), 256, b"")  # 256 MiB of zeros
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match="times its"):
            inflate(raw, "metrics.json.gz", 512 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak
