"""Narrow a mapping rule's query to an incident's scope (pure: no I/O).

A fleet's TSDB holds a metric for every GPU and host; an incident needs those of one model's
hosts. A rule whose query is a plain selector (``DCGM_FI_DEV_GPU_UTIL``, a passthrough name)
gets a regex matcher on the source label its scope label comes from, so the server answers
only the scope's series.
"""

from __future__ import annotations

import re

from correlator.promsource.mapping import MetricRule

SCOPE_ORDER = ("model", "service", "instance", "host", "pod", "node")  # narrowest first
MAX_VALUES = 200  # values one matcher lists at most; more: the rule is not narrowed
_BARE = re.compile(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{(.*)\})?\s*", re.S)


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def source_label(rule: MetricRule, target: str) -> str | None:
    """Return the server's label a rule takes an output label from as it is, or None."""
    for label in rule.labels:
        if label.target == target:
            return label.source if label.regex is None else None
    if (rule.keep_all and target not in rule.drop) or target in rule.keep:
        return target
    return None


def narrowed(rule: MetricRule, values: dict[str, set[str]]) -> str | None:
    """Return the rule's query kept to the scope's label values, or None if it cannot be.

    A series is in scope by any of its labels: a rule whose series may carry several scope
    labels (a passthrough keeps them all) is asked for each, ``or``-ed, so a feature
    service's series (``service`` only) are not lost to a ``model`` matcher they cannot meet.
    """
    bare = _BARE.fullmatch(rule.query)
    if bare is None:
        return None
    body = (bare.group(2) or "").strip().rstrip(",")
    parts = []
    for target in SCOPE_ORDER:
        wanted = sorted(v for v in values.get(target, ()) if v)
        source = source_label(rule, target)
        if not wanted or source is None:
            continue
        if len(wanted) > MAX_VALUES:
            return None  # too long a matcher: read it whole (counted) rather than miss some
        regex = "|".join(re.escape(v) for v in wanted)
        matcher = f'{source}=~"{_quote(regex)}"'
        parts.append(f"{bare.group(1)}{{{body + ', ' if body else ''}{matcher}}}")
    return " or ".join(parts) or None


def _pushable(rule: MetricRule, label: str) -> str | None:
    """Return the server's label a selector's matcher on ``label`` may test, or None."""
    if any(r.source == label and r.target != label for r in rule.labels):
        return None  # the label is renamed away: the output does not carry it
    return source_label(rule, label)


def pushed_down(rule: MetricRule, selectors) -> str | None:
    """Return the rule's query with the selectors' matchers asked of the server, or None.

    Each selector becomes the rule's plain selector plus those of its matchers whose label
    the rule takes as it is (``Hostname`` for ``host`` on DCGM's), joined with ``or``; the
    caller still applies every matcher to the converted series. None when the query is an
    expression, or a selector has no matcher the server can test (it would read it whole).
    """
    bare = _BARE.fullmatch(rule.query)
    if bare is None:
        return None
    body = (bare.group(2) or "").strip().rstrip(",")
    parts = []
    for sel in selectors:
        tests = []
        for m in sel.matchers:
            source = _pushable(rule, m.label)
            if source is not None:
                tests.append(f'{source}{m.op}"{_quote(m.value)}"')
        if not tests:
            return None
        inner = ", ".join([body, *tests] if body else tests)
        parts.append(f"{bare.group(1)}{{{inner}}}")
    return " or ".join(dict.fromkeys(parts)) or None
