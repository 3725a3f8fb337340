"""Asking an expression's selectors for one more matcher only where its result keeps the label."""

from __future__ import annotations

import re

import pytest

from correlator.promql.plan import parse_query
from correlator.promsource.expression import carries, group_regex, with_matcher

CPU = '100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m])))'


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        (CPU, True),
        ("node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes", True),
        ("sum without (cpu) (rate(x[1m]))", True),
        ("histogram_quantile(0.99, sum by (instance, le) (rate(x_bucket[1m])))", True),
        ("topk by (instance) (3, x)", True),
        ("a / on (instance) b", True),
        ("sum(rate(x[1m]))", False),  # folded over every instance
        ("sum without (instance) (x)", False),
        ("topk(3, x)", False),  # the top 3 of the fleet, not of the scope
        ("a / on (job) b", False),
        ("a / ignoring (instance) b", False),
        ("a * ignoring (job) group_left (instance) b", False),  # instance from b
        ('label_replace(x, "instance", "$1", "pod", "(.*)")', False),
        ('label_replace(x, "host", "$1", "instance", "(.*):.*")', True),
        ("x / scalar(sum(y))", False),
        ("absent(x)", False),
        ('count_values by (instance) ("instance", x)', False),
    ],
)
def test_a_plan_keeps_the_label_only_through_steps_that_carry_it(query, kept):
    assert carries(parse_query(query), "instance") is kept


def test_every_selector_is_asked_and_nothing_else_changes():
    query = 'a{job="n"} - on (instance) b offset 5m or rate(a{job="n"}[1m]) > 0'
    got = with_matcher(query, "instance", "=~", "h1:9100|h2:9100")
    assert " ".join(str(got).split()) == (
        'a{job="n", instance=~"h1:9100|h2:9100"} - on (instance) '
        'b{instance=~"h1:9100|h2:9100"} offset 5m or '
        'rate(a{job="n", instance=~"h1:9100|h2:9100"}[1m]) > 0'
    )
    assert with_matcher("sum(x)", "instance", "=", "h1") is None
    assert with_matcher("not promql ((", "instance", "=", "h1") is None
    # A name inside another is not touched; a string literal is left as it is.
    got = with_matcher('label_replace(ab, "d", "a", "e", "(.*)") + a', "e", "=", "v")
    assert got == 'label_replace(ab{e="v"}, "d", "a", "e", "(.*)") + a{e="v"}'


def test_a_one_group_rewrite_is_asked_for_by_the_sources_it_turns_into_the_wanted():
    regex = group_regex(r"\[?(.*?)\]?:[0-9]+", "h1|h\\.2")
    assert regex is not None
    for value, kept in [
        ("h1:9100", True),
        ("h.2:9100", True),
        ("[h1]:9100", True),
        ("h1", True),  # a value the rewrite does not match is kept as it is
        ("h11:9100", False),
        ("hx2:9100", False),
        ("h2:9100", False),
    ]:
        assert bool(re.fullmatch(regex, value)) is kept, value
    assert group_regex(r"(a)-(b)", "x") is None  # two groups: which one is the value?
    assert group_regex(r"(?=a)(.*)", "x") is None  # lookahead: not the server's regex
    assert group_regex(r"[(](.*)", "x") == r"(?:[(](?:x))|(?:x)"
