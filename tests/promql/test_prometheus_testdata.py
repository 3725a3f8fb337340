"""Prometheus' own PromQL test files: what causeline answers, it answers as Prometheus 2.42.

The files are ``promql/testdata`` of Prometheus v2.42.0 (``prometheus-testdata/README.md``).
Each eval block is evaluated by causeline's planner and evaluator; an answer that differs from
the file's is a failure, and a query outside the supported PromQL must be refused (400).
``benchmarks/promql_testdata.py`` prints the figures and the refused queries.
"""

from __future__ import annotations

from collections import Counter

import pytest
from fastapi.testclient import TestClient

from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tokens import create_token
from tests.promql.promtest import TESTDATA, compare, read_file, run_case, run_file
from tests.receivers.wire import RW_HEADERS, STALE, snappy, write_request

FILES = sorted(TESTDATA.glob("*.test"))
# Eval blocks that pass now, of 566; raise it as the supported PromQL grows.
PASSING_AT_LEAST = 497
T0 = 1_700_000_000_000  # where the files' time 0 goes in the store (unix ms)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_answer_differs_from_prometheus(path):
    differ = [o for o in run_file(path) if o.status == "differ"]
    assert not differ, "\n".join(
        f"{path.name}:{o.case.line} {o.case.query}: {o.reason}" for o in differ
    )


def test_the_supported_share_does_not_shrink():
    counts = Counter(o.status for path in FILES for o in run_file(path))
    assert sum(counts.values()) == 566
    assert counts["pass"] >= PASSING_AT_LEAST, counts
    assert counts["unsupported"] == 0, counts  # "unstorable" ones agree too (promtest.Outcome)


def test_staleness_file_through_remote_write_and_the_query_api(engine):
    """staleness.test's samples and stale markers, sent as Prometheus sends them, then read."""
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="writer")
    app = create_app(ServiceSettings(database_url=str(engine.url)), engine=engine)
    cases = [c for c in read_file(TESTDATA / "staleness.test") if run_case(c).status == "pass"]
    assert len(cases) >= 10
    with TestClient(app) as client:
        for case in cases:
            block = f"b{case.line}"  # each eval's series apart, under its own label
            series = [
                (
                    {**s.labels, "block": block},
                    [
                        (STALE if stale else value, T0 + t)
                        for t, value, stale in zip(s.ts, s.values, s.stale, strict=True)
                    ],
                )
                for s in case.data
            ]
            sent = client.post(
                "/api/v1/write",
                content=snappy(write_request(series)),
                headers=RW_HEADERS | {"Authorization": f"Bearer {token}"},
            )
            assert sent.status_code == 200, sent.text
            query = case.query.replace("metric", f'metric{{block="{block}"}}')
            params = {"query": query, "time": (T0 + case.at_ms) / 1000}
            answer = client.get("/api/v1/query", params=params).json()
            assert answer["status"] == "success", answer
            got = [
                ({k: v for k, v in r["metric"].items() if k != "block"}, float(r["value"][1]))
                for r in answer["data"]["result"]
            ]
            why = compare(case, got)
            assert not why, f"staleness.test:{case.line} {case.query}: {why}"
