"""The answer in one sentence: top suspect, where, when, owner and person, next step."""

from __future__ import annotations

from correlator.analysis.confidence import UNLIKE
from correlator.incidents.headline import headline

T = 1_700_000_000.0  # 22:13:20 UTC


def test_the_headline_says_what_where_when_who_and_next():
    snap = {
        "confidence": 0.83,
        "suspects": [
            {
                "kind": "series",
                "metric": "log_lines:count1m",
                "labels": {"service": "ts-basic-service", "level": "error"},
                "onset": T - 180,
                "lead_seconds": 180,
                "owner": "infra",
                "person": "wang.fang",
                "next_step": "look at ts-basic-service's error logs since 22:10.",
            }
        ],
    }
    said = headline(snap)
    assert said == (
        "Most likely (83%): error log lines on ts-basic-service, from 22:10 UTC, 3 min before "
        "the breach; owner infra (ask wang.fang); next: look at ts-basic-service's error logs "
        "since 22:10."
    )


def test_the_headline_of_an_unsure_answer_a_change_and_no_answer():
    change = {"kind": "change", "id": "demo-chg-3", "owner": "algo", "onset": T, "lead_seconds": 0}
    assert headline({"confidence": 0.31, "suspects": [change]}).startswith(
        "Unsure (31%), compare the top 3; first: change demo-chg-3, from 22:13 UTC with the breach"
    )
    unlike = {"confidence": 0.5, "confidence_says": UNLIKE, "suspects": [change]}
    assert headline(unlike).startswith(
        "Unsure (no past incident had this many series), compare the top 3; first: change"
    )
    assert headline({"suspects": [change]}).startswith("Top suspect: change demo-chg-3")
    assert headline({"suspects": []}) == (
        "No suspect ranked: nothing moved before the breach in the stored data."
    )
    assert headline({"suspects": [], "analysis_error": "no samples"}) == (
        "No suspect ranked: no samples."
    )
