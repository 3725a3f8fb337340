"""The Markdown review cannot be forged: user text never adds headings, cells, code or HTML."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from correlator.incidents.review import render_review

T0 = 1_733_131_500
HEADINGS = [
    "Post-incident review: incident 7 - {sla}",
    "Summary",
    "Impact",
    "Timeline",
    "Triggers and contributing factors",
    "Chain (input -> model -> output -> downstream)",
    "Action items",
]
FORGERIES = {
    "heading": "done\n\n## Summary\n\n- Most likely trigger: nothing to see",
    "setext": "done\n===",
    "table": "a | b | c |\n| --- | --- |\n| forged | row |",
    "fence": "```\nthe rest of the review is hidden",
    "tilde-fence": "~~~",
    "inline-code": "`` unterminated",
    "html": "<script>alert(1)</script><img src=x onerror=alert(2)>",
    "html-block": "<div>\n\n## Summary\n\n</div>",
    "quote": "> quoted",
    "list": "- item",
    "ordered": "1. item",
    "heading-start": "# Fake title",
    "link": "[click](javascript:alert(1))",
    "separator": "\u2028## Summary\u2029",
}


def _incident(text: str) -> dict:
    return {
        "id": 7,
        "sla": text,
        "status": "resolved",
        "severity": "critical",
        "breach_start": T0,
        "breach_end": T0 + 600,
        "resolved_at": T0 + 900,
        "resolved_by": text,
        "scope": {"kind": "model", "labels": {"model": text}},
        "oncall": {"algo": {"person": text}, "infra": None},
        "suspects": [
            {
                "kind": "series",
                "metric": "model_input_length_bucket",
                "labels": {"pod": text},
                "rank": 1,
                "score": 0.9,
                "owner": "algo",
                "lead_seconds": 120,
                "evidence": text,
                "onset": T0 - 120,
            },
            {"kind": "change", "id": text, "rank": 2, "score": 0.5, "owner": text},
        ],
        "changes": [
            {"id": "chg-1", "kind": "deploy", "summary": text, "person": text, "ts": T0 - 300}
        ],
        "notes": [
            {"ts": T0 + 60, "author": text, "team": text, "text": text},
            {"ts": T0 + 120, "author": "w", "team": "infra", "text": "ordinary note"},
        ],
        "chain": [
            {
                "segment": "input",
                "component": text,
                "owner": "algo",
                "status": "suspect",
                "evidence": text,
            }
        ],
    }


def _parse(markdown: str) -> list:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown)


def _rows(tokens) -> list[int]:
    """Return the number of cells of every table row."""
    rows, cells = [], 0
    for tok in tokens:
        if tok.type == "tr_open":
            cells = 0
        elif tok.type in ("td_open", "th_open"):
            cells += 1
        elif tok.type == "tr_close":
            rows.append(cells)
    return rows


@pytest.mark.parametrize("text", list(FORGERIES.values()), ids=list(FORGERIES))
def test_user_text_cannot_forge_the_review(text):
    review = render_review(_incident(text))
    tokens = _parse(review)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type in ("heading_open",)]
    assert len(headings) == len(HEADINGS) and headings[1:] == HEADINGS[1:], headings
    assert headings[0].startswith("Post-incident review: incident 7 - ")
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    forbidden = {
        "fence",
        "code_block",
        "code_inline",
        "html_block",
        "html_inline",
        "blockquote_open",
        "link_open",
        "image",
        "hr",
        "s_open",
    }
    assert not kinds & forbidden, kinds & forbidden
    # The timeline has one row per event and two cells in each; the action items two cells.
    assert _rows(tokens) == [2] * (1 + 7) + [2] * (1 + 3)
    # The summary keeps its three items; the user text is shown, not interpreted.
    lists = [i for i, t in enumerate(tokens) if t.type == "bullet_list_open"]
    summary = tokens[lists[0] :]
    closing = next(i for i, t in enumerate(summary) if t.type == "bullet_list_close")
    assert sum(t.type == "list_item_open" for t in summary[:closing]) == 3
    assert "ordinary note" in review
    words = [w for w in text.split() if w.isalpha() and len(w) > 3]
    shown = " ".join(c.content for t in tokens for c in t.children or [] if c.type == "text")
    assert all(w in shown for w in words), (words, shown[:300])
