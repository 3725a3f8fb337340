"""``causeline sla`` on a real database, and ``--person`` as the old name of ``--author``."""

from __future__ import annotations

import json

from causeline.cli import main

SLA = ["--name", "m p99", "--metric", "lat", "--labels", "model=m", "env=prod"]
RULE = ["--op", ">", "--threshold", "30", "--for", "2m"]


def _run(capsys, db_url, *argv) -> str:
    assert main([*argv, "--database-url", db_url]) == 0
    return capsys.readouterr().out


def _fails(capsys, db_url, *argv) -> str:
    assert main([*argv, "--database-url", db_url]) == 2
    return capsys.readouterr().err


def test_sla_add_list_show_delete(capsys, db_url, engine, tmp_path):
    doc = tmp_path / "sla.md"
    doc.write_text("# m p99\n\nPage the algorithm on-call.\n", encoding="utf-8")
    got = json.loads(
        _run(capsys, db_url, "sla", "add", *SLA, *RULE, "--doc", str(doc), "--author", "li")
    )
    assert got["labels"] == {"model": "m", "env": "prod"} and got["for_seconds"] == 120
    assert got["description"].startswith("# m p99") and got["model"] == "m"
    assert got["author"] == "li" and got["severity"] == "major"
    table = _run(capsys, db_url, "sla", "list")
    assert "m p99" in table and "env=prod,model=m" in table and "max > 30 for 120s" in table
    assert json.loads(_run(capsys, db_url, "sla", "show", "m p99")) == got
    assert "exists" in _fails(capsys, db_url, "sla", "add", *SLA, *RULE)
    _run(capsys, db_url, "sla", "add", *SLA, "--op", "<", "--threshold", "1", "--replace")
    assert json.loads(_run(capsys, db_url, "sla", "show", "m p99"))["op"] == "<"
    assert "deleted" in _run(capsys, db_url, "sla", "delete", "m p99")
    assert "causeline sla list" in _fails(capsys, db_url, "sla", "show", "m p99")
    assert "causeline sla list" in _fails(capsys, db_url, "sla", "delete", "m p99")
    assert "no SLAs" in _run(capsys, db_url, "sla", "list")


def test_sla_add_errors_name_the_field(capsys, db_url, engine, tmp_path):
    assert "'threshold'" in _fails(capsys, db_url, "sla", "add", *SLA, "--op", ">")
    assert "'op'" in _fails(capsys, db_url, "sla", "add", *SLA, "--threshold", "3")
    bad_agg = _fails(capsys, db_url, "sla", "add", *SLA, *RULE, "--aggregate", "p99")
    assert "'aggregate'" in bad_agg
    too_long = _fails(
        capsys, db_url, "sla", "add", *SLA, "--op", ">", "--threshold", "1", "--for", "200d"
    )
    assert "'for_seconds' (--for)" in too_long
    assert "--doc" in _fails(
        capsys, db_url, "sla", "add", *SLA, *RULE, "--doc", str(tmp_path / "x")
    )
    assert "--labels" in _fails(capsys, db_url, "sla", "add", *SLA, "oops", *RULE)
    assert "no SLAs" in _run(capsys, db_url, "sla", "list")


def test_analyze_points_to_sla_list(capsys, db_url, engine):
    assert "causeline sla list" in _fails(capsys, db_url, "analyze", "--sla", "nope")


def test_person_is_a_hidden_alias_of_author(capsys, db_url, engine):
    argv = ["change", "add", "--kind", "deploy", "--owner", "algo", "--at", "now-1h"]
    got = json.loads(_run(capsys, db_url, *argv, "--id", "c-1", "--author", "li"))
    assert got["author"] == "li" and got["person"] == "li"
    assert main([*argv, "--id", "c-2", "--person", "wang", "--database-url", db_url]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["person"] == "wang" and json.loads(out)["author"] == "wang"
    assert "--person is deprecated" in err
    from causeline.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    acts = next(a for a in sub.choices["change"]._actions if a.dest == "action")
    help_text = acts.choices["add"].format_help()
    assert "--author" in help_text and "--person" not in help_text
