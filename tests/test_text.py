"""The one text rule: surrogates and control characters refused, free text keeps its lines."""

from __future__ import annotations

import json
import random

import orjson
import pytest

from correlator.text import (
    argument_problem,
    first_bad_text,
    may_hold_bad_text,
    printable,
    repair,
    text_problem,
)

BAD_ANYWHERE = [
    "\ud800",
    "\udfff",
    "\x1b]0;pwned\x07",
    "\x1b[31m",
    "a\x00b",
    "\x7f",
    "\x85",
    "\x9b",
]


@pytest.mark.parametrize("value", BAD_ANYWHERE)
def test_surrogates_and_control_characters_are_refused_even_in_free_text(value):
    assert text_problem(value) and text_problem(value, free=True)


def test_free_text_keeps_tab_and_newlines_names_do_not():
    for value in ("line one\nline two", "a\tb", "windows\r\n"):
        assert text_problem(value, free=True) is None
        assert "free text" in (text_problem(value) or "")
    assert text_problem("µs, 😀, naïve, 東京") is None


def test_reasons_say_what_and_where():
    assert text_problem("ok\ud800") == (
        "must not contain unpaired surrogates (U+D800 at character 2): not valid Unicode text"
    )
    assert text_problem("\x1b[31m") == "must not contain control characters (U+001B at character 0)"
    assert "NUL" in (text_problem("a\x00") or "")


def test_first_bad_text_names_the_field_in_document_order():
    doc = {"name": "ok", "labels": {"a": "1", "b": "x\x1b"}, "summary": "two\nlines"}
    assert first_bad_text(doc) == (["labels", "b"], text_problem("x\x1b"))
    assert first_bad_text({"summary": "a\nb", "card": {"description": ["x\ty"]}}) is None
    assert first_bad_text({"id": "a\nb"})[0] == ["id"]
    assert first_bad_text({"m": [1, 2.5, {"k\ud800": 1}]}) == (
        ["m", 2, "k\ud800"],
        "key " + text_problem("k\ud800"),
    )
    assert first_bad_text({"summary": {"k\n": "v"}})[0] == ["summary", "k\n"]  # keys: names
    assert first_bad_text([{"a": "\x85"}, {"a": "\x00"}])[0] == [0, "a"]


def _random_text(rng: random.Random) -> str:
    pool = ["a", "é", "😀", "\t", "\n", "\\", '"', "\x1b", "\x7f", "\x85", "\ud83d", "\ude00", "/"]
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 6)))


def test_the_byte_prefilter_never_misses_what_the_walk_refuses():
    rng = random.Random(7)
    for _ in range(3000):
        doc = {"summary": _random_text(rng), "labels": {_random_text(rng): _random_text(rng)}}
        texts = [json.dumps(doc), json.dumps(doc, ensure_ascii=False)]
        if first_bad_text(doc) is None:
            continue
        for text in texts:
            raw = text.encode("utf-8", "surrogatepass")
            assert may_hold_bad_text(raw), raw
    clean = orjson.dumps({"series": [{"name": "m", "labels": {"pod": "µ-東京"}, "v": [1.5]}]})
    assert not may_hold_bad_text(clean)


def test_repair_replaces_unpaired_surrogates_only():
    assert repair({"k\ud800": ["x\udfffy", 3, "😀"]}) == {"k\ufffd": ["x\ufffdy", 3, "😀"]}


def test_printable_escapes_what_a_terminal_would_obey():
    assert printable("\x1b]0;pwned\x07") == "\\u001b]0;pwned\\u0007"
    assert printable("a\x9bb\ud800") == "a\\u009bb\\ud800"
    assert printable("two\nlines\r", lines=True) == "two\nlines\\u000d"
    assert printable("two\nlines") == "two\\u000alines"
    text = json.dumps({"k": "a\x1b\x7f\x85\tb", "n": "\ud800"}, indent=2, ensure_ascii=False)
    assert json.loads(printable(text, lines=True)) == {"k": "a\x1b\x7f\x85\tb", "n": "\ud800"}
    assert printable(text, lines=True).isascii()


def test_arguments_not_utf8_are_named_by_their_byte():
    assert argument_problem("caf\udce9") == "not valid UTF-8 (byte 0xE9 at character 3)"
    assert argument_problem("two\nlines", free=True) is None
    assert "U+001B" in (argument_problem("\x1b[2J", free=True) or "")
