"""Bundle import checks text as the API does: one line naming the file and field, nothing stored."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from causeline.cli import main
from correlator.bundle import read_bundle
from correlator.store.engine import make_engine
from correlator.store.migrate import upgrade
from tests.conftest import scenarios_dir
from tests.helpers import count_rows

PUBLIC = sorted((scenarios_dir() / "public").iterdir())


def _copy(tmp_path):
    dest = tmp_path / "bundle"
    shutil.copytree(PUBLIC[0], dest)
    for f in dest.iterdir():
        f.chmod(0o644)
    return dest


def _edit(folder, name, change) -> None:
    doc = json.loads((folder / name).read_text())
    change(doc)
    (folder / name).write_text(json.dumps(doc, indent=1))


def _edit_metrics(folder, change) -> None:
    doc = json.loads(gzip.decompress((folder / "metrics.json.gz").read_bytes()))
    change(doc)
    (folder / "metrics.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))


def _osc_sla_name(d):
    _edit(d, "sla.json", lambda s: s.update(name="p99\x1b]0;pwned\x07"))
    return "sla.json: name: must not contain control characters (U+001B at character 3)"


def _newline_in_sla_label(d):
    _edit(d, "sla.json", lambda s: s["labels"].update(model="a\nb"))
    return "sla.json: labels.model: must not contain control characters (U+000A"


def _csi_change_label(d):
    _edit(d, "changes.json", lambda c: c[1]["labels"].update(service="\x1b[31mred"))
    return "changes.json: [1].labels.service: must not contain control characters (U+001B"


def _c1_topology_id(d):
    _edit(d, "topology.json", lambda t: t["nodes"][2].update(id="model:\x9bx"))
    return "topology.json: nodes[2].id: must not contain control characters (U+009B"


def _escaped_key(d):
    _edit(d, "changes.json", lambda c: c[0]["labels"].update({"k\x1b": "v"}))
    return "changes.json: [0].labels.k\\u001b: key must not contain control characters (U+001B"


def _c1_metric_label(d):
    _edit_metrics(d, lambda m: m["data"]["result"][2]["metric"].update(pod="p\x85"))
    return "metrics.json.gz: data.result[2].metric.pod: labels must not contain control characters"


def _del_metric_name(d):
    _edit_metrics(d, lambda m: m["data"]["result"][0]["metric"].update(__name__="lat\x7f"))
    return "metrics.json.gz: data.result[0].metric.__name__: must not contain control characters"


def _surrogate_summary(d):
    text = (d / "changes.json").read_text()
    (d / "changes.json").write_text(text.replace('"summary": "', '"summary": "\\ud800', 1))
    return "changes.json: broken JSON: no low surrogate in string: line"


@pytest.mark.parametrize(
    "spoil",
    [
        _osc_sla_name,
        _newline_in_sla_label,
        _csi_change_label,
        _c1_topology_id,
        _escaped_key,
        _c1_metric_label,
        _del_metric_name,
        _surrogate_summary,
    ],
)
def test_import_refuses_bad_text_naming_file_and_field(tmp_path, capsys, spoil):
    db_url = f"sqlite:///{tmp_path / 'c.db'}"
    bad = _copy(tmp_path)
    expected = spoil(bad)
    capsys.readouterr()
    assert main(["import", str(bad), "--database-url", db_url]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and err.isprintable(), err
    assert expected in err and err.endswith("nothing was imported"), err
    engine = make_engine(db_url)
    upgrade(engine)
    assert count_rows(engine) == 0 and count_rows(engine, "slas") == 0
    engine.dispose()


def test_free_text_in_a_bundle_keeps_its_lines(tmp_path):
    bundle = _copy(tmp_path)
    _edit(bundle, "changes.json", lambda c: c[0].update(summary="two\nlines\tand a tab"))
    _edit(bundle, "sla.json", lambda s: s.update(description="# SLA\r\n\r\npage algo\n"))
    got = read_bundle(bundle)
    assert got.changes[0]["summary"] == "two\nlines\tand a tab"
    assert got.sla["description"].startswith("# SLA\r\n")


@pytest.mark.parametrize("folder", PUBLIC, ids=[p.name for p in PUBLIC])
def test_every_public_scenario_passes_the_check(folder):
    assert read_bundle(folder).series
