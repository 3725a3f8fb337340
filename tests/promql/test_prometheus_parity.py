"""PromQL answers from causeline's store equal the real Prometheus' on the same samples."""

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
from tests.promql import data
from tests.promql.compare import answer_of, same_answer
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
    # Between vectors: matching, grouping, comparisons and set operators.
    "temp - temp offset 1m",
    "rate(req_total[5m]) / ignoring(inst) group_left sum by (job) (temp)",
    "sum by (job) (temp) * on(job) group_right rate(req_total[5m])",
    "rate(req_total[5m]) > on(job, inst) rate(req_total[5m] offset 5m)",
    "temp > 22",
    "temp > bool 22",
    "22 < temp",
    "rate(req_total[5m]) == bool 2",
    "temp and on(job) rate(req_total[5m]) > 1",
    "temp or rate(req_total[1m])",
    'temp unless on(job) temp{job="b"}',
    "temp atan2 temp offset 1m",
    # Functions of instant vectors and scalars.
    "abs(-temp)",
    "round(temp, 0.5)",
    "clamp(temp, 21, 29)",
    "clamp_min(temp, 25)",
    "clamp_max(temp, 25)",
    "ceil(temp) + floor(temp)",
    "sqrt(temp) + ln(temp) + log2(temp) + log10(temp) + exp(temp / 10)",
    "sgn(temp - 25)",
    "scalar(sum(temp)) * 2",
    "vector(1) + 1",
    "time()",
    "timestamp(temp)",
    'absent(nonexistent{job="a"})',
    "absent(temp)",
    'label_replace(temp, "x", "$1-y", "job", "(.*)")',
    'label_join(temp, "x", "/", "job", "inst")',
    "minute(timestamp(temp))",
    f"temp @ {data.START + 600}",
    # Functions of range vectors and subqueries.
    "avg_over_time(temp[5m])",
    "max_over_time(temp[3m])",
    "min_over_time(temp[3m])",
    "sum_over_time(temp[2m])",
    "count_over_time(temp[5m])",
    "stddev_over_time(temp[10m])",
    "stdvar_over_time(temp[10m])",
    "quantile_over_time(0.9, temp[10m])",
    "last_over_time(temp[2m])",
    "present_over_time(temp[1m])",
    "absent_over_time(temp[1m])",
    "changes(temp[5m])",
    "resets(req_total[30m])",
    "delta(temp[5m])",
    "idelta(temp[5m])",
    "deriv(temp[5m])",
    "predict_linear(temp[10m], 600)",
    "holt_winters(temp[10m], 0.3, 0.6)",
    "max_over_time(rate(req_total[1m])[10m:1m])",
    "avg_over_time(temp[5m:30s])",
    # Aggregations.
    "topk(1, temp)",
    "bottomk(2, rate(req_total[5m]))",
    "quantile(0.5, temp)",
    "stddev(temp)",
    "stdvar by (job) (rate(req_total[5m]))",
    'count_values("v", ceil(temp))',
    "group by (job) (temp)",
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


@pytest.mark.parametrize("query", QUERIES)
def test_range_queries_match_prometheus(both, query):
    client, url = both
    for step in STEPS:
        params = {"query": query, "start": WINDOW[0], "end": WINDOW[1], "step": step}
        theirs = httpx.get(f"{url}/api/v1/query_range", params=params, timeout=30).json()
        ours = client.get("/api/v1/query_range", params=params).json()
        assert theirs["data"]["resultType"] == ours["data"]["resultType"]
        expected = answer_of(theirs)
        assert expected or query.startswith("2"), f"{query}: Prometheus answered nothing"
        same_answer(answer_of(ours), expected, f"{query} step {step}")


@pytest.mark.parametrize(
    "query",
    [
        "temp",
        "sum by (job) (rate(req_total[5m]))",
        "2 * 3",
        "sort_desc(temp)",
        "sort(rate(req_total[5m]))",
        "topk(2, rate(req_total[5m]))",
        "max_over_time(temp[10m:1m])",
    ],
)
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
            same_answer(answer_of(ours), answer_of(theirs), f"{query} at {at}")
            if query.startswith(("sort", "topk")):  # their order is part of the answer
                order = [r["metric"] for r in theirs["data"]["result"]]
                assert [r["metric"] for r in ours["data"]["result"]] == order, query
