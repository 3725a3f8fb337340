"""The CLI takes text as the API does and prints stored text escaped, never raw to the terminal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from causeline.cli import main
from correlator.store.engine import write_transaction
from correlator.store.incidents import open_incident
from correlator.store.slas import upsert_sla

OSC = "\x1b]0;pwned\x07"  # sets the terminal's title
SLA = ["--metric", "lat", "--op", ">", "--threshold", "5"]


def _out(capsys, db_url, *argv) -> str:
    assert main([*argv, "--database-url", db_url]) == 0
    return capsys.readouterr().out


def _fails(capsys, db_url, *argv) -> str:
    assert main([*argv, "--database-url", db_url]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and err.isprintable(), err
    return err


def _store_bad_sla(engine) -> int:
    """Store, as an older version could, an SLA whose text holds terminal sequences."""
    sla = {
        "name": f"p99{OSC}",
        "metric": "lat\x1b[31m",
        "labels": {"model": "m\x9b2J"},
        "op": ">",
        "threshold": 5,
        "for_seconds": 0,
        "description": "page algo\x7f",
    }
    with write_transaction(engine) as conn:
        upsert_sla(conn=conn, sla=sla)
        return open_incident(
            conn=conn, sla=sla["name"], severity="major", breach_start=1.7e9, now=1.7e9, by="t"
        )


def _no_controls(text: str) -> None:
    assert not any(c in text for c in "\x1b\x07\x7f\x9b"), repr(text)


def test_stored_terminal_sequences_are_printed_escaped(capsys, db_url, engine):
    _store_bad_sla(engine)
    table = _out(capsys, db_url, "sla", "list")
    _no_controls(table)
    assert "p99\\u001b]0;pwned\\u0007" in table and "model=m\\u009b2J" in table
    shown = _out(capsys, db_url, "sla", "show", f"p99{OSC}")
    _no_controls(shown)
    assert json.loads(shown)["description"] == "page algo\x7f"  # still valid JSON
    listed = _out(capsys, db_url, "incident", "list")
    _no_controls(listed)
    assert "p99\\u001b]0;pwned" in listed
    assert "deleted" in _out(capsys, db_url, "sla", "delete", f"p99{OSC}")  # still removable


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--name", f"p99{OSC}"], "--name: must not contain control characters (U+001B"),
        (["--name", "a\tb"], "--name: must not contain control characters (U+0009"),
        (["--name", "ok", "--labels", "model=\x9b"], "--labels: must not contain control"),
        (["--name", "ok", "--author", "\udcff"], "--author: not valid UTF-8 (byte 0xFF"),
        (["--name", "ok\udce9"], "--name: not valid UTF-8 (byte 0xE9 at character 2)"),
    ],
)
def test_sla_add_refuses_bad_text_naming_the_flag(capsys, db_url, engine, flags, said):
    assert said in _fails(capsys, db_url, "sla", "add", *flags, *SLA)
    assert "no SLAs" in _out(capsys, db_url, "sla", "list")


def test_incident_note_refuses_bad_text_naming_the_argument(capsys, db_url, engine):
    inc = str(_store_bad_sla(engine))
    err = _fails(capsys, db_url, "incident", "note", inc, "caf\udce9")
    assert err.startswith("causeline incident: error: argument TEXT: not valid UTF-8 (byte 0xE9")
    err = _fails(capsys, db_url, "incident", "note", inc, "a\x1b[2Jb")
    assert "argument TEXT: must not contain control characters (U+001B" in err
    err = _fails(capsys, db_url, "incident", "note", inc, "ok", "--author", "\udcff")
    assert "argument --author: not valid UTF-8" in err
    assert "lines" in _out(capsys, db_url, "incident", "note", inc, "two\nlines\tok")
    err = _fails(capsys, db_url, "incident", "resolve", inc, "--text", "\udcff")
    assert "argument --text: not valid UTF-8" in err
    notes = json.loads(_out(capsys, db_url, "incident", "show", inc))["notes"]
    assert [n["text"] for n in notes] == ["two\nlines\tok"]


def test_a_non_utf8_argument_from_a_real_shell_is_one_line(db_url, engine):
    inc = str(_store_bad_sla(engine))
    causeline = Path(sys.executable).with_name("causeline")
    argv = [causeline, "incident", "note", inc, b"\xff", "--database-url", db_url]
    done = subprocess.run(argv, capture_output=True, timeout=120)
    err = done.stderr.decode("utf-8", "replace").strip()
    assert done.returncode == 2 and "\n" not in err and "Traceback" not in err, err
    assert "argument TEXT: not valid UTF-8 (byte 0xFF at character 0)" in err
