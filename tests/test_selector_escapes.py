"""Selector string escapes: quotes, backslashes and non-ASCII values survive parsing."""

from __future__ import annotations

import re

import pytest

from correlator.selector import SelectorError, parse_selector


def test_escaped_quotes_and_non_ascii_values_parse_as_written():
    sel = parse_selector('m{service="caf\u00e9 \\"x\\"",host="\u4e3b\u673a-1"}')
    assert [m.value for m in sel.matchers] == ['caf\u00e9 "x"', "\u4e3b\u673a-1"]
    assert sel.matches("m", {"service": 'caf\u00e9 "x"', "host": "\u4e3b\u673a-1"})


def test_regex_escapes_written_by_re_escape_match_literally():
    value = "caf\u00e9.svc(1)+[a]|b\\c"
    quoted = re.escape(value).replace("\\", "\\\\").replace('"', '\\"')
    sel = parse_selector(f'm{{service=~"{quoted}"}}')
    assert sel.matches("m", {"service": value})
    assert not sel.matches("m", {"service": "caf\u00e9xsvc(1)+[a]|b\\c"})


def test_string_escapes_and_unknown_ones():
    sel = parse_selector('m{a="\\x41\\u00e9\\n\\t\\\\",b=~"x\\.y"}')
    assert sel.matchers[0].value == "A\u00e9\n\t\\"
    assert sel.matchers[1].value == "x\\.y"  # an unknown string escape stays for the regex


def test_dashboard_regex_of_values_matches_exactly_those_values():
    from dashboard.selectors import selector

    values = ["i-1.svc:9100", "a b\tc\nd#&~-", "(x)*+?[y]{2}|^$\\", "\u4e3b\u673a-1"]
    sel = parse_selector(selector("up", {"instance": values}))
    assert sel.matchers[0].op == "=~"
    for value in values:
        assert sel.matches("up", {"instance": value})
    for other in ["i-1xsvc:9100", "a b", "x", "(x)*+?[y]{2}", ""]:
        assert not sel.matches("up", {"instance": other})


@pytest.mark.parametrize(
    "text",
    ['m{a=~"\\uD800"}', 'm{a="\\udfff"}', 'm{a="\\U00110000"}', 'm{a=~"x\\U7fffffff"}'],
)
def test_an_escape_of_no_unicode_character_is_a_selector_error(text):
    """A surrogate half or a code point past U+10FFFF is refused, as Go's strconv does.

    It raised UnicodeEncodeError (RE2 cannot take a surrogate) or ValueError from chr(),
    a 500 on every route that takes a selector (/api/v1/series, labels, query_range's match).
    """
    with pytest.raises(SelectorError, match="not a Unicode character"):
        parse_selector(text)
