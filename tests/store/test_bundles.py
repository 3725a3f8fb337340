"""Import and export of incident bundles on real databases."""

from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pytest
from sqlalchemy import inspect

from causeline.cli import main
from correlator.bundle import BundleError, load_matrix, read_bundle
from correlator.store.bundles import ExportError, export_bundle, import_bundle
from correlator.store.migrate import current_revision
from tests.conftest import scenarios_dir
from tests.helpers import count_rows

PUBLIC = sorted(p for p in (scenarios_dir() / "public").iterdir() if p.is_dir())


def _by_key(series):
    return {(s.name, tuple(sorted(s.labels.items()))): s for s in series}


def test_migrations_build_the_schema_from_empty(engine):
    assert current_revision(engine) is not None
    tables = set(inspect(engine).get_table_names())
    assert {
        "series",
        "samples",
        "histograms",
        "changes",
        "topology_nodes",
        "topology_edges",
        "slas",
        "tokens",
        "events",
        "fingerprints",
    } <= tables


@pytest.mark.parametrize("folder", PUBLIC, ids=[p.name for p in PUBLIC])
def test_import_export_round_trip(engine, folder, tmp_path):
    original = read_bundle(folder)
    first = import_bundle(engine=engine, bundle=original)
    again = import_bundle(engine=engine, bundle=original)
    assert first.inserted == first.samples
    assert again.inserted == 0
    stored = count_rows(engine)
    assert stored == first.samples

    exported = export_bundle(engine=engine, start=0, end=2e9)
    (tmp_path / "out").mkdir()
    from correlator.bundle import write_bundle

    back = read_bundle(write_bundle(tmp_path / "out", exported))
    want, got = _by_key(original.series), _by_key(back.series)
    assert set(want) == set(got)
    for key, s in want.items():
        np.testing.assert_array_equal(got[key].ts, s.ts)
        np.testing.assert_array_equal(got[key].values, s.values)
    assert back.changes == original.changes
    assert back.sla == original.sla
    assert {n["id"] for n in back.topology["nodes"]} == {
        n["id"] for n in original.topology["nodes"]
    }
    assert len(back.topology["edges"]) == len(original.topology["edges"])


def test_histogram_buckets_are_grouped(engine):
    bundle = read_bundle(PUBLIC[0])
    import_bundle(engine=engine, bundle=bundle)
    hist_families = {
        (s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "le")))
        for s in bundle.series
        if s.name.endswith("_bucket")
    }
    assert count_rows(engine, "histograms") == len(hist_families)


def _copy(folder, tmp_path):
    dest = tmp_path / "bundle"
    shutil.copytree(folder, dest)
    for f in dest.iterdir():
        f.chmod(0o644)
    dest.chmod(0o755)
    return dest


def _break_missing(d):
    (d / "topology.json").unlink()
    return "topology.json", "missing"


def _break_json(d):
    (d / "changes.json").write_text('[{"id": "chg-1", ')
    return "changes.json", "broken JSON"


def _break_shape(d):
    doc = json.loads(gzip.decompress((d / "metrics.json.gz").read_bytes()))
    doc["data"]["result"][3]["values"][5] = ["late", "1"]
    (d / "metrics.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    return "metrics.json.gz", "data.result[3].values"


def _break_word(d):
    doc = json.loads(gzip.decompress((d / "metrics.json.gz").read_bytes()))
    doc["data"]["result"][3]["values"][5][1] = "true"
    compact = json.dumps(doc, separators=(",", ":"))  # Prometheus' own form: the fast reader
    (d / "metrics.json.gz").write_bytes(gzip.compress(compact.encode()))
    return "metrics.json.gz", "data.result[3].values"


def _break_sla(d):
    (d / "sla.json").write_text(json.dumps({"name": "x", "metric": "m", "op": "~"}))
    return "sla.json", "'op'"


@pytest.mark.parametrize(
    "spoil", [_break_missing, _break_json, _break_shape, _break_word, _break_sla]
)
def test_bad_bundle_names_the_file_and_leaves_the_store(engine, tmp_path, capsys, spoil):
    db_url = engine.url.render_as_string(hide_password=False)
    assert main(["import", str(PUBLIC[1]), "--database-url", db_url]) == 0
    before = count_rows(engine), count_rows(engine, "changes")
    bad = _copy(PUBLIC[0], tmp_path)
    file, what = spoil(bad)
    capsys.readouterr()
    assert main(["import", str(bad), "--database-url", db_url]) == 2
    err = capsys.readouterr().err
    assert file in err and what in err and "nothing was imported" in err
    assert (count_rows(engine), count_rows(engine, "changes")) == before
    with pytest.raises(BundleError):
        read_bundle(bad)


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")])
def test_sample_text_reads_to_the_same_bits_as_python_reads_it(separators):
    rng = np.random.default_rng(7)
    scale = 10.0 ** rng.integers(-300, 300, 2000)
    plain = [repr(float(v)) for v in rng.standard_normal(2000) * scale]
    plain += ["-0", "0", "-0.0", "-0e3", "1e-400", "5e-324", "0.1", "123456789012345678901"]
    special = ["NaN", "+Inf", "-Inf", "1e400", "-0", "2.5"]  # no JSON numbers for these
    result = [
        {
            "metric": {"__name__": name},
            "values": [[1_700_000_000 + k / 8, v] for k, v in enumerate(vs)],
        }
        for name, vs in (("plain", plain), ("special", special))
    ]
    doc = {"status": "success", "data": {"resultType": "matrix", "result": result}}
    got = load_matrix(json.dumps(doc, separators=separators).encode(), "m.json")
    for series, texts in zip(got, (plain, special), strict=True):
        want = np.array([float(v) for v in texts])
        assert np.array_equal(series.values, want, equal_nan=True)
        assert np.array_equal(np.signbit(series.values), np.signbit(want))  # -0 stays -0
        assert np.array_equal(series.ts, 1_700_000_000 + np.arange(len(texts)) / 8)


def test_export_needs_a_clear_sla_choice(engine):
    with pytest.raises(ExportError, match="no SLA is stored"):
        export_bundle(engine=engine, start=0, end=10)
    for folder in PUBLIC[:2]:
        import_bundle(engine=engine, bundle=read_bundle(folder))
    with pytest.raises(ExportError, match="several SLAs"):
        export_bundle(engine=engine, start=0, end=2e9)
    name = read_bundle(PUBLIC[1]).sla["name"]
    assert export_bundle(engine=engine, start=0, end=2e9, sla_name=name).sla["name"] == name
    with pytest.raises(ExportError, match="no SLA named"):
        export_bundle(engine=engine, start=0, end=2e9, sla_name="nope")
