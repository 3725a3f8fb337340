"""Every expression of Node Exporter Full, the DCGM exporter's and vLLM's dashboards, asked of
causeline and of the Debian Prometheus on the same samples, gets the same answer."""

from __future__ import annotations

import httpx
import pytest
from fastapi.testclient import TestClient

from collector.schema import Batch, SeriesBatch
from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine
from correlator.store.migrate import upgrade
from correlator.store.tsdb.ingest import store_batch
from tests.promql import dashboards, data
from tests.promql.compare import answer_of, same_answer
from tests.promsource import servers

pytestmark = pytest.mark.integration
DASHBOARDS = dashboards.expressions()
START, END = data.START, data.END  # whole past hours: promtool writes blocks of them


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dashboards")
    everything = [e for exprs in DASHBOARDS.values() for e in exprs]
    series = dashboards.samples(everything, START, END)
    engine = make_engine(f"sqlite:///{tmp / 'causeline.db'}")
    upgrade(engine)
    batch = [SeriesBatch(s.name, s.labels, s.ts.tolist(), s.values.tolist()) for s in series]
    store_batch(engine=engine, batch=Batch(batch))
    settings = ServiceSettings(database_url=str(engine.url), read_max_series=50_000)
    ctx, url = servers.prometheus_backfilled(tmp, series)
    with ctx, TestClient(create_app(settings, engine=engine)) as client:
        yield client, url
    engine.dispose()


def test_the_dashboards_hold_what_the_issue_counted():
    assert {k: len(v) for k, v in DASHBOARDS.items()} == {
        "node-exporter-full": 276,
        "dcgm-exporter": 8,
        "vllm": 27,
    }


@pytest.mark.parametrize("dashboard", sorted(DASHBOARDS))
def test_every_expression_answers_as_prometheus(both, dashboard):
    client, url = both
    answered = 0
    for expr in DASHBOARDS[dashboard]:
        for route, params in (
            ("query_range", {"query": expr, "start": START + 600, "end": END, "step": 60}),
            ("query", {"query": expr, "time": END - 30}),
        ):
            theirs = httpx.get(f"{url}/api/v1/{route}", params=params, timeout=30).json()
            ours = client.post(f"/api/v1/{route}", data=params).json()
            assert ours["status"] == "success", (expr, ours)
            assert ours["data"]["resultType"] == theirs["data"]["resultType"], expr
            if theirs["data"]["resultType"] == "scalar":
                assert ours["data"]["result"] == theirs["data"]["result"], expr
                continue
            expected = answer_of(theirs)
            same_answer(answer_of(ours), expected, f"{dashboard}: {expr} ({route})")
            answered += bool(expected)
    assert answered >= 0.9 * 2 * len(DASHBOARDS[dashboard])  # the rest: nothing on both sides
