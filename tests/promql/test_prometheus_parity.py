"""PromQL answers from causeline's store equal the real Prometheus' on the same samples."""

from __future__ import annotations

import math

import httpx
import pytest
from fastapi.testclient import TestClient

from collector.schema import Batch, SeriesBatch
from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine
from correlator.store.ingest import store_batch
from correlator.store.migrate import upgrade
from tests.promql import data
from tests.promsource import servers

QUERIES = [
    "req_total",
    'temp{job="a"}',
    'req_total{job!="a"}',
    'req_total{inst=~"1|2"}',
    'req_total{inst!~"2"}',
    "temp offset 2m",
    "rate(req_total[1m])",
    "rate(req_total[5m])",
    "irate(req_total[1m])",
    "increase(req_total[2m])",
    "rate(req_total[5m] offset 1m)",
    "sum by (job) (rate(req_total[5m]))",
    "sum(increase(req_total[3m]))",
    "avg without (inst) (temp)",
    "max by (job) (temp)",
    "min(temp)",
    "count by (job) (req_total)",
    "histogram_quantile(0.9, sum by (le, job) (rate(lat_bucket[5m])))",
    "histogram_quantile(0.5, rate(lat_bucket[2m]))",
    "histogram_quantile(0.99, sum without (job) (rate(lat_bucket[5m])))",
    "1000 * temp",
    "temp / 1000",
    "rate(req_total[5m]) * 60 - 1",
    "-temp",
    "2 * 3",
]
STEPS = ["15s", "60", "37s"]
WINDOW = (data.START + 7, data.END + 600)  # past the last sample: lookback runs out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("promql")
    engine = make_engine(f"sqlite:///{tmp / 'causeline.db'}")
    upgrade(engine)
    batch = Batch(
        [SeriesBatch(s.name, s.labels, s.ts.tolist(), s.values.tolist()) for s in data.series()]
    )
    store_batch(engine=engine, batch=batch)
    settings = ServiceSettings(database_url=str(engine.url))
    ctx, url = servers.prometheus_backfilled(tmp, data.series())
    with ctx, TestClient(create_app(settings, engine=engine)) as client:
        yield client, url
    engine.dispose()


def _answer(doc: dict) -> dict:
    assert doc["status"] == "success", doc
    out = {}
    for item in doc["data"]["result"]:
        key = tuple(sorted(item["metric"].items()))
        points = item.get("values") or [item["value"]]
        out[key] = [(float(t), float(v)) for t, v in points]
    return out


def _same(ours: dict, theirs: dict, what: str) -> None:
    assert sorted(ours) == sorted(theirs), what
    for key, points in theirs.items():
        mine = ours[key]
        assert [t for t, _ in mine] == [t for t, _ in points], (what, key)
        for (t, a), (_, b) in zip(mine, points, strict=True):
            same = (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=0)
            assert same, (what, key, t, a, b)


@pytest.mark.parametrize("query", QUERIES)
def test_range_queries_match_prometheus(both, query):
    client, url = both
    for step in STEPS:
        params = {"query": query, "start": WINDOW[0], "end": WINDOW[1], "step": step}
        theirs = httpx.get(f"{url}/api/v1/query_range", params=params, timeout=30).json()
        ours = client.get("/api/v1/query_range", params=params).json()
        assert theirs["data"]["resultType"] == ours["data"]["resultType"]
        expected = _answer(theirs)
        assert expected or query.startswith("2"), f"{query}: Prometheus answered nothing"
        _same(_answer(ours), expected, f"{query} step {step}")


@pytest.mark.parametrize("query", ["temp", "sum by (job) (rate(req_total[5m]))", "2 * 3"])
def test_instant_queries_match_prometheus(both, query):
    client, url = both
    for at in (data.START + 1234.5, data.END + 200, data.END + 400):
        params = {"query": query, "time": at}
        theirs = httpx.get(f"{url}/api/v1/query", params=params, timeout=30).json()
        ours = client.post("/api/v1/query", data=params).json()
        assert theirs["data"]["resultType"] == ours["data"]["resultType"], query
        if theirs["data"]["resultType"] == "scalar":
            assert ours["data"]["result"] == theirs["data"]["result"]
        else:
            _same(_answer(ours), _answer(theirs), f"{query} at {at}")
