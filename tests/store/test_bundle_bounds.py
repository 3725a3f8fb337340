"""Bundles stay in their folder: capped inflation, no links out, checked text, safe export."""

from __future__ import annotations

import gzip
import json
import shutil
import zlib

import pytest

from causeline.cli import main
from correlator.bundle import BundleError, read_bundle
from tests.conftest import scenarios_dir
from tests.helpers import count_rows

BUNDLE = scenarios_dir() / "public" / "01-input-length-drift"


def _copy(tmp_path):
    dest = tmp_path / "bundle"
    shutil.copytree(BUNDLE, dest)
    for f in dest.iterdir():
        f.chmod(0o644)
    return dest


def _import(folder, db_url, *extra) -> int:
    return main(["import", str(folder), "--database-url", db_url, *extra])


def _bomb(size: int) -> bytes:
    """Return one gzip member of ``size`` zero bytes, built without holding them."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"\0" * (1 << 20)
    parts = [deflate.compress(chunk) for _ in range(size >> 20)]
    return b"".join(parts) + deflate.flush()


def _metrics(folder) -> bytes:
    return gzip.decompress((folder / "metrics.json.gz").read_bytes())


def _inflating(d):
    (d / "metrics.json.gz").write_bytes(_bomb(64 << 20))
    return "metrics.json.gz", "inflates to more than 8388608 bytes"


def _truncated(d):
    raw = (d / "metrics.json.gz").read_bytes()
    (d / "metrics.json.gz").write_bytes(raw[: len(raw) // 2])
    return "metrics.json.gz", "truncated gzip"


def _concatenated(d):
    text = _metrics(d)
    half = len(text) // 2
    (d / "metrics.json.gz").write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]))
    return "metrics.json.gz", "follow the first gzip member"


def _padded(d):
    (d / "metrics.json.gz").write_bytes((d / "metrics.json.gz").read_bytes() + b"\0" * 16)
    return "metrics.json.gz", "16 bytes follow"


def _link_out(d):
    outside = d.parent / "elsewhere.json"
    outside.write_text((d / "sla.json").read_text())
    (d / "sla.json").unlink()
    (d / "sla.json").symlink_to(outside)
    return "sla.json", "outside the bundle folder"


def _nul_sla(d):
    sla = json.loads((d / "sla.json").read_text())
    sla["name"] = "latency\x00hidden"
    (d / "sla.json").write_text(json.dumps(sla))
    return "sla.json", "name: must not contain NUL"


def _long_sla(d):
    sla = json.loads((d / "sla.json").read_text())
    sla["name"] = "s" * 201
    (d / "sla.json").write_text(json.dumps(sla))
    return "sla.json", "at most 200 characters"


def _nul_change(d):
    changes = json.loads((d / "changes.json").read_text())
    changes[0]["summary"] = "ok\x00"
    (d / "changes.json").write_text(json.dumps(changes))
    return "changes.json", "[0].summary: must not contain NUL"


def _nul_label(d):
    doc = json.loads(_metrics(d))
    doc["data"]["result"][2]["metric"]["pod"] = "p\x00"
    (d / "metrics.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    return "metrics.json.gz", "data.result[2].metric.pod: labels must not contain NUL"


@pytest.mark.parametrize(
    "spoil",
    [
        _inflating,
        _truncated,
        _concatenated,
        _padded,
        _link_out,
        _nul_sla,
        _long_sla,
        _nul_change,
        _nul_label,
    ],
)
def test_import_refuses_a_spoiled_bundle_naming_the_file(tmp_path, capsys, spoil):
    db_url = f"sqlite:///{tmp_path / 'c.db'}"
    bad = _copy(tmp_path)
    file, what = spoil(bad)
    capsys.readouterr()
    limit = ["--max-file-bytes", str(8 << 20)] if spoil is _inflating else []
    assert _import(bad, db_url, *limit) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert f"{file}:" in err and what in err and err.endswith("nothing was imported"), err
    assert count_rows(_engine(db_url)) == 0


def test_inflation_cap_and_how_to_raise_it(tmp_path, capsys):
    db_url = f"sqlite:///{tmp_path / 'c.db'}"
    assert _import(_copy(tmp_path), db_url, "--max-file-bytes", "3000000") == 2
    err = capsys.readouterr().err
    assert "metrics.json.gz: inflates to more than 3000000 bytes" in err
    assert "--max-file-bytes" in err
    with pytest.raises(BundleError, match="inflates to more than"):
        read_bundle(BUNDLE, max_bytes=3_000_000)
    assert _import(BUNDLE, db_url, "--max-file-bytes", str(64 << 20)) == 0


def _engine(db_url):
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade

    engine = make_engine(db_url)
    upgrade(engine)
    return engine


@pytest.fixture
def stored(tmp_path):
    """Return the URL of a database holding the bundle."""
    db_url = f"sqlite:///{tmp_path / 'c.db'}"
    assert _import(BUNDLE, db_url) == 0
    return db_url


def _export(out, db_url) -> int:
    return main(["export", str(out), "--database-url", db_url])


def test_export_never_writes_through_a_link(tmp_path, stored, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "sla.json").symlink_to(victim)
    capsys.readouterr()
    assert _export(out, stored) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "sla.json: is a link" in err and "does not write through links" in err
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in out.iterdir()) == ["sla.json"]  # nothing else written

    dangling = tmp_path / "out2"
    dangling.mkdir()
    (dangling / "metrics.json.gz").symlink_to(tmp_path / "created-outside.gz")
    assert _export(dangling, stored) == 2
    assert not (tmp_path / "created-outside.gz").exists()

    linked = tmp_path / "linked"
    linked.symlink_to(out)
    assert _export(linked, stored) == 2
    assert "linked: is a link" in capsys.readouterr().err


def test_export_to_a_file_is_one_line(tmp_path, stored, capsys):
    target = tmp_path / "report.txt"
    target.write_text("not a folder")
    capsys.readouterr()
    assert _export(target, stored) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "report.txt: exists and is not a folder" in err
    assert target.read_text() == "not a folder"
    fine = tmp_path / "fine"
    assert _export(fine, stored) == 0
    assert read_bundle(fine).sla == read_bundle(BUNDLE).sla
