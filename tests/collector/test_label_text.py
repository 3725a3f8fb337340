"""Label values follow the service's rule for names (``correlator.text``): no control character."""

from __future__ import annotations

import pytest

from collector.schema import BatchError, check_labels
from correlator.text import text_problem

# Every C0, DEL and C1 character, the surrogates' edges, and printable neighbours of each.
CHARS = [*range(0x00, 0xA2), 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFFFD, 0x1F600]


@pytest.mark.parametrize("code", CHARS, ids=hex)
def test_a_label_value_is_refused_exactly_when_the_text_rule_refuses_it(code):
    value = f"ab{chr(code)}c"
    problem = text_problem(value)
    if problem is None:
        assert check_labels({"pod": value}, "labels") == {"pod": value}
        return
    with pytest.raises(BatchError) as caught:
        check_labels({"pod": value}, "series[2].labels")
    assert caught.value.path == "series[2].labels.pod"
    assert caught.value.reason == "label value " + problem


def test_an_escape_sequence_is_named_at_its_first_character():
    with pytest.raises(BatchError, match=r"control characters \(U\+001B at character 3\)"):
        check_labels({"ok": "fine", "pod": "pod\x1b[31mred"}, "labels")
