"""Two environment fingerprints side by side, flattened to dotted keys, differences first."""

from __future__ import annotations

import json
from typing import NamedTuple

from dash import html

MISSING = "—"
SHORT = 60  # characters of a long value shown before the rest is folded away
WRAP = {"wordBreak": "break-word", "overflowWrap": "anywhere"}


class DiffRow(NamedTuple):
    """One key: its value on each side (text, or the items of a list) and whether they agree."""

    key: str
    left: str | list[str]
    right: str | list[str]
    same: bool


def _text(value) -> str:
    if value is None:
        return "(none)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def flatten(value, prefix: str = "") -> dict[str, str | list[str]]:
    """Flatten nested dicts into dotted keys; a list of plain values stays a list of texts."""
    if isinstance(value, dict):
        out: dict[str, str | list[str]] = {}
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and not any(isinstance(v, dict | list) for v in value):
        return {prefix: [_text(v) for v in value]}
    if isinstance(value, list):
        out = {}
        for i, inner in enumerate(value):
            out.update(flatten(inner, f"{prefix}[{i}]"))
        return out
    return {prefix: _text(value)}


def _same(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return set(a) == set(b)  # CPU flags and the like: an order change is no difference
    return a == b


def env_diff(left: dict, right: dict) -> list[DiffRow]:
    """Return one row per key of either fingerprint, differences first."""
    a, b = flatten(left), flatten(right)
    rows = [
        DiffRow(k, a.get(k, MISSING), b.get(k, MISSING), k in a and k in b and _same(a[k], b[k]))
        for k in sorted(a.keys() | b.keys())
    ]
    return sorted(rows, key=lambda r: (r.same, r.key))


def split_items(items: list[str], other) -> tuple[list[str], list[str]]:
    """Return (items only on this side, items on both sides) of a list value."""
    theirs = set(other) if isinstance(other, list) else set()
    return [i for i in items if i not in theirs], [i for i in items if i in theirs]


def _folded(summary: str, text: str) -> html.Details:
    return html.Details([html.Summary(summary), html.Div(text, className="small", style=WRAP)])


def _cell(value, other, same: bool):
    """Return a value as a table cell shows it: long ones folded, a list's own items marked."""
    if isinstance(value, list):
        if same or not value:
            whole = ", ".join(value) or "(empty list)"
            return whole if len(whole) <= SHORT else _folded(f"{len(value)} items", whole)
        only, shared = split_items(value, other)
        parts: list = ["only here: "] if only else ["nothing only here"]
        for item in only:
            parts += [html.Mark(item), " "]
        if shared:
            parts.append(_folded(f"and {len(shared)} on both sides", ", ".join(shared)))
        return html.Div(parts, style=WRAP)
    if len(value) > SHORT:
        return _folded(value[:SHORT] + "…", value)
    return value


def diff_view(rows: list[DiffRow], names: tuple[str, str], *, show_all: bool = False) -> list:
    """Return the diff as the page shows it: a verdict, then the differing (or every) key."""
    differing = [r for r in rows if not r.same]
    if not differing:
        verdict = html.P(
            [html.B("No differences"), f": the two fingerprints agree on all {len(rows)} keys."],
            id="env-diff-verdict",
        )
    else:
        hidden = "" if show_all else " (keys that agree are hidden)"
        verdict = html.P(
            f"{len(differing)} of {len(rows)} keys differ{hidden}.",
            id="env-diff-verdict",
            className="small",
        )
    shown = rows if show_all else differing
    if not shown:
        return [verdict]
    head = html.Thead(
        html.Tr(
            [
                html.Th("key", style={"width": "20%"}),
                html.Th(names[0], style={"width": "40%"}),
                html.Th(names[1], style={"width": "40%"}),
            ]
        )
    )
    body = [
        html.Tr(
            [
                html.Td(r.key),
                html.Td(_cell(r.left, r.right, r.same), style=WRAP),
                html.Td(_cell(r.right, r.left, r.same), style=WRAP),
            ],
            className="" if r.same else "diff",
        )
        for r in shown
    ]
    grid = html.Table(
        [head, html.Tbody(body)],
        className="grid",
        id="env-diff-table",
        style={"tableLayout": "fixed"},
    )
    return [verdict, grid]
