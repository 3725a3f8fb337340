"""Narrow a mapping rule's query to an incident's scope (pure: no I/O).

A fleet's TSDB holds a metric for every GPU and host; an incident needs those of one model's
hosts. A rule whose query is a plain selector (``DCGM_FI_DEV_GPU_UTIL``, a passthrough name)
gets a regex matcher on the source label its scope label comes from, so the server answers
only the scope's series. An expression (node-exporter's CPU busy share by ``instance``) gets
it on each of its selectors where it keeps that label through (``expression.py``); a label
the rule rewrites with a one-group regex (``host`` from ``instance``) is asked for by the
source values the rewrite turns into the wanted ones.
"""

from __future__ import annotations

import re

from correlator.promsource.expression import group_regex, with_matcher
from correlator.promsource.mapping import MetricRule
from correlator.selector import matcher_text

SCOPE_ORDER = ("model", "service", "instance", "host", "pod", "node")  # narrowest first
MAX_VALUES = 200  # values one matcher lists at most; more: the rule is not narrowed
_BARE = re.compile(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{(.*)\})?\s*", re.S)


def source_label(rule: MetricRule, target: str) -> str | None:
    """Return the server's label a rule takes an output label from as it is, or None."""
    for label in rule.labels:
        if label.target == target:
            return label.source if label.regex is None else None
    if (rule.keep_all and target not in rule.drop) or target in rule.keep:
        return target
    return None


def _source_regex(rule: MetricRule, target: str, regex: str) -> tuple[str, str] | None:
    """Return the server's label and a regex of its values that give ``target`` in ``regex``.

    A label taken as it is asks for the same regex; one rewritten by a one-group regex with
    the group as its replacement asks for the rewrite's matches (``group_regex``).
    """
    source = source_label(rule, target)
    if source is not None:
        return source, regex
    for label in rule.labels:
        if label.target == target and label.regex is not None:
            if label.replacement not in (r"\1", "$1", "${1}"):
                return None
            widened = group_regex(label.regex.pattern, regex)
            return (label.source, widened) if widened is not None else None
    return None


def _asked(rule: MetricRule, values: dict[str, set[str]]) -> list[tuple[str, str]] | None:
    """Return the server's label and value regex to ask for each scope label, narrowest first.

    None when the rule cannot be narrowed: too many values for one matcher (read it whole,
    counted, rather than miss some), or an output label the server cannot be asked for.
    """
    out = []
    for target in SCOPE_ORDER:
        wanted = sorted(v for v in values.get(target, ()) if v)
        if not wanted:
            continue
        if len(wanted) > MAX_VALUES:
            return None
        asked = _source_regex(rule, target, "|".join(re.escape(v) for v in wanted))
        if asked is None:
            if any(label.target == target for label in rule.labels):
                return None  # the output carries the label but the server cannot be asked
            continue
        out.append(asked)
    return out


def _either(queries: list[str]) -> str | None:
    """Return the queries joined with ``or``, each in brackets when there are several."""
    queries = list(dict.fromkeys(queries))
    if len(queries) > 1:
        return " or ".join(f"({q})" for q in queries)
    return queries[0] if queries else None


def _selector(bare: re.Match, tests: list[str]) -> str:
    """Return a bare rule's selector with ``tests`` (matcher texts) after its own matchers."""
    body = (bare.group(2) or "").strip().rstrip(",")
    return f"{bare.group(1)}{{{', '.join([body, *tests] if body else tests)}}}"


def _expression(rule: MetricRule, values: dict[str, set[str]]) -> str | None:
    """Return an expression rule's query kept to the scope, or None if it cannot be."""
    asked = _asked(rule, values)
    if not asked:
        return None
    parts = [with_matcher(rule.query, label, "=~", regex) for label, regex in asked]
    if any(p is None for p in parts):
        return None
    return _either([p for p in parts if p is not None])


def narrowed(rule: MetricRule, values: dict[str, set[str]]) -> str | None:
    """Return the rule's query kept to the scope's label values, or None if it cannot be.

    A series is in scope by any of its labels: a rule whose series may carry several scope
    labels (a passthrough keeps them all) is asked for each, ``or``-ed, so a feature
    service's series (``service`` only) are not lost to a ``model`` matcher they cannot meet.
    """
    bare = _BARE.fullmatch(rule.query)
    if bare is None:
        return _expression(rule, values)
    asked = _asked(rule, values)
    if not asked:
        return None
    return " or ".join(
        _selector(bare, [matcher_text(label, "=~", regex)]) for label, regex in asked
    )


def _pushed_test(rule: MetricRule, matcher) -> tuple[str, str, str] | None:
    """Return a selector matcher as the server's label, operator and value, or None."""
    if any(r.source == matcher.label and r.target != matcher.label for r in rule.labels):
        return None  # the label is renamed away: the output does not carry it
    source = source_label(rule, matcher.label)
    if source is not None:
        return source, matcher.op, matcher.value
    if matcher.op not in ("=", "=~"):
        return None  # a negation of a rewritten label has no one regex of its sources
    regex = re.escape(matcher.value) if matcher.op == "=" else matcher.value
    asked = _source_regex(rule, matcher.label, regex)
    return (asked[0], "=~", asked[1]) if asked is not None else None


def _pushed_expression(rule: MetricRule, selectors) -> str | None:
    """Return an expression rule's query with each selector's matchers asked, or None."""
    parts = []
    for sel in selectors:
        query, asked = rule.query, False
        for m in sel.matchers:
            test = _pushed_test(rule, m)
            narrower = with_matcher(query, *test) if test is not None else None
            if narrower is not None:
                query, asked = narrower, True
        if not asked:
            return None
        parts.append(query)
    return _either(parts)


def pushed_down(rule: MetricRule, selectors) -> str | None:
    """Return the rule's query with the selectors' matchers asked of the server, or None.

    Each selector becomes the rule's plain selector plus those of its matchers whose label
    the rule takes as it is (``Hostname`` for ``host`` on DCGM's), joined with ``or``; the
    caller still applies every matcher to the converted series. An expression is asked on
    each of its selectors where it keeps the label through. None when a selector has no
    matcher the server can test (it would read it whole).
    """
    bare = _BARE.fullmatch(rule.query)
    if bare is None:
        return _pushed_expression(rule, selectors)
    parts = []
    for sel in selectors:
        tests = [matcher_text(*t) for m in sel.matchers if (t := _pushed_test(rule, m))]
        if not tests:
            return None
        parts.append(_selector(bare, tests))
    return " or ".join(dict.fromkeys(parts)) or None
