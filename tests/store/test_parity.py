"""The store gives a bundle's answer: import, analyse from the store, export, analyse again."""

from __future__ import annotations

import json

import pytest

from causeline.cli import main
from correlator.analysis import analyze
from correlator.bundle import read_bundle
from correlator.store.recordings import list_recordings
from correlator.store.slas import get_sla
from tests.conftest import scenarios_dir

SETS = ("public", "petshop-low", "nezha-train")
PER_SET = 2  # the whole of each set runs in benchmarks/parity.py


def _sample() -> list:
    picked = []
    for name in SETS:
        folders = sorted(
            p for p in (scenarios_dir() / name).iterdir() if (p / "sla.json").is_file()
        )
        step = max(1, len(folders) // PER_SET)
        picked += folders[::step][:PER_SET]
    return picked


BUNDLES = _sample()


def _top(result: dict, n: int = 5) -> list[tuple]:
    return [
        ("change", s["id"])
        if s["kind"] == "change"
        else (s["kind"], s.get("metric"), tuple(sorted(s["labels"].items())))
        for s in result["suspects"][:n]
    ]


def _cli(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("folder", BUNDLES, ids=[f"{p.parent.name}/{p.name}" for p in BUNDLES])
def test_store_and_export_give_the_bundles_top_five(capsys, db_url, engine, folder, tmp_path):
    bundle = read_bundle(folder)
    direct = analyze(bundle)
    assert direct["suspects"], "the bundle must rank something for parity to mean anything"
    sla = bundle.sla["name"]

    out = _cli(capsys, "import", str(folder), "--database-url", db_url)
    assert "skipped: truth.json" in out
    if bundle.baseline:
        assert f"baseline of {len(bundle.baseline)} series kept" in out

    stored = json.loads(
        _cli(
            capsys,
            "analyze",
            "--sla",
            sla,
            "--at",
            str(direct["breach_start"]),
            "--database-url",
            db_url,
        )
    )
    assert _top(stored) == _top(direct)
    assert stored["breach_start"] == direct["breach_start"]
    assert stored["window"]["recording"] == folder.name
    assert stored["window"]["baseline"] == bool(bundle.baseline)

    _cli(capsys, "export", str(tmp_path / "out"), "--sla", sla, "--database-url", db_url)
    again = analyze(read_bundle(tmp_path / "out"))
    assert _top(again) == _top(direct)
    assert (tmp_path / "out" / "baseline.json.gz").is_file() == bool(bundle.baseline)


def test_analyze_without_at_takes_the_latest_declared_breach(capsys, db_url, engine):
    folders = sorted((scenarios_dir() / "petshop-low").glob("petshop-low_traffic-*-issue_*"))
    by_sla: dict[str, list] = {}
    for f in folders:
        by_sla.setdefault(json.loads((f / "sla.json").read_text())["name"], []).append(f)
    sla, pair = next((k, v[:2]) for k, v in by_sla.items() if len(v) >= 2)
    for f in pair:
        _cli(capsys, "import", str(f), "--database-url", db_url)
    with engine.connect() as conn:
        assert "breach_start" not in get_sla(conn=conn, name=sla)  # kept per incident instead
        windows = list_recordings(conn=conn, sla=sla)
    assert len(windows) == 2
    latest = max(windows, key=lambda w: w.breach_start)

    assert main(["analyze", "--sla", sla, "--database-url", db_url]) == 0
    got = capsys.readouterr()
    result = json.loads(got.out)
    assert result["breach_start"] == round(latest.breach_start)
    assert result["window"]["recording"] == latest.source
    assert "the latest declared breach" in got.err and latest.source in got.err
    want = analyze(read_bundle(scenarios_dir() / "petshop-low" / latest.source))
    assert _top(result) == _top(want)


def test_analyze_without_at_and_no_breach_says_so(capsys, db_url, engine, tmp_path):
    folder = scenarios_dir() / "public" / "01-input-length-drift"
    _cli(capsys, "import", str(folder), "--database-url", db_url)
    sla = json.loads((folder / "sla.json").read_text())
    sla["name"] = "never breached"
    sla["threshold"] = 1e12
    (tmp_path / "sla.json").write_text(json.dumps(sla))
    from correlator.store.engine import write_transaction
    from correlator.store.slas import upsert_sla

    with write_transaction(engine) as conn:
        upsert_sla(conn=conn, sla=sla)
    assert main(["analyze", "--sla", "never breached", "--database-url", db_url]) == 2
    err = capsys.readouterr().err
    assert "no breach of SLA 'never breached'" in err and "--at" in err
