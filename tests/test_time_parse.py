"""Times and durations on the command line: absolute, relative to an injected now, errors."""

from __future__ import annotations

import argparse

import pytest

from causeline.cli import main
from causeline.commands.options import parse_duration, parse_time

NOW = 1_733_000_000.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        ("now-2h", NOW - 7200),
        ("now+15m", NOW + 900),
        ("now - 30s", NOW - 30),
        ("NOW-1W", NOW - 7 * 86400),
        ("2h ago", NOW - 7200),
        ("90s ago", NOW - 90),
        ("1d ago", NOW - 86400),
        ("1.5h ago", NOW - 5400),
        ("3m ago", NOW - 180),
        ("2w ago", NOW - 14 * 86400),
        ("1733000000", 1_733_000_000.0),
        ("1733000000.5", 1_733_000_000.5),
        ("2024-11-25T08:00Z", 1_732_521_600.0),
        ("2024-11-25T08:00:00+00:00", 1_732_521_600.0),
        ("2024-11-25T09:00+01:00", 1_732_521_600.0),
        ("2024-11-25T08:00", 1_732_521_600.0),
        ("2024-11-25", 1_732_492_800.0),
    ],
)
def test_parse_time_accepts_every_form(text, expected):
    assert parse_time(text, now=NOW) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text", ["yesterday", "now-2", "now-2y", "2 ago", "2h", "ago", "", "nan", "inf", "now*2h"]
)
def test_parse_time_rejects_other_text_naming_the_forms(text):
    with pytest.raises(argparse.ArgumentTypeError) as err:
        parse_time(text, now=NOW)
    for form in ("unix seconds", "ISO 8601", "now-2h", "2h ago"):
        assert form in str(err.value)


@pytest.mark.parametrize(
    ("text", "expected"), [("90", 90), ("90s", 90), ("2m", 120), ("1.5h", 5400), ("1d", 86400)]
)
def test_parse_duration(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "2y", "-5", "m", "2 minutes"])
def test_parse_duration_rejects_other_text(text):
    with pytest.raises(argparse.ArgumentTypeError, match="duration"):
        parse_duration(text)


def test_a_bad_time_is_an_argparse_error_naming_the_option(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["export", str(tmp_path / "o"), "--from", "yesterday", "--to", "now"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --from" in err and "now-2h" in err and "ISO 8601" in err


def test_every_time_option_takes_relative_times():
    from causeline.cli import build_parser
    from tests.causeline.test_cli import _subcommands

    checked = 0
    for path, p in _subcommands(build_parser()):
        for action in p._actions:
            if action.type is parse_time:
                assert action.type("now-1h") < action.type("now"), (path, action.dest)
                checked += 1
    assert checked >= 10
