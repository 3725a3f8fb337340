"""Bounds on one read: series and points per request, and time, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from collector.schema import series_key
from correlator.api.app import create_app
from correlator.settings import ServiceSettings
from correlator.store.engine import write_transaction
from correlator.store.tsdb import read
from correlator.store.tsdb.bounds import TooManyPoints
from correlator.store.tsdb.read import read_range
from correlator.store.tsdb.series import ensure_series
from correlator.store.tsdb.write import insert_columns, sample_columns

T0 = 1_700_000_000.0
POINTS = 40  # per series, 15 s apart
HOSTS = ["h0", "h1", "h2", "h3"]


def _store(engine) -> list[int]:
    """Store four series of POINTS samples each; return their ids in host order."""
    items = {series_key("gpu_util", {"host": h}): ("gpu_util", {"host": h}) for h in HOSTS}
    with write_transaction(engine) as conn:
        ids = ensure_series(conn=conn, items=items)
        sids = [ids[series_key("gpu_util", {"host": h})] for h in HOSTS]
        ts = [[T0 + 15 * k for k in range(POINTS)] for _ in HOSTS]
        values = [[float(k) for k in range(POINTS)] for _ in HOSTS]
        insert_columns(conn=conn, cols=sample_columns(sids, ts, values))
    return sids


def _client(engine, **limits) -> TestClient:
    settings = ServiceSettings(database_url=str(engine.url), **limits)
    return TestClient(create_app(settings, engine=engine))


def _range(client, match, start=T0, end=T0 + 15 * POINTS, step=None):
    params = {"match": match, "start": start, "end": end}
    if step is not None:
        params["step"] = step
    return client.get("/api/v1/query_range", params=params)


def _refused(resp, *words: str) -> None:
    assert resp.status_code == 422, resp.text[:300]
    detail = resp.json()["detail"]
    assert detail["field"] == "match"
    for word in words:
        assert word in detail["reason"], detail["reason"]


def test_a_read_past_the_points_bound_gets_422_and_a_narrower_one_succeeds(engine):
    _store(engine)
    with _client(engine, read_max_points=100) as client:  # the store holds 160 samples
        _refused(
            _range(client, '{host=~"h.*"}'),
            "more than 100 points",
            "CAUSELINE_READ_MAX_POINTS",
            "shorter window",
            "larger step",
        )
        one = _range(client, 'gpu_util{host="h0"}')  # a more specific selector
        assert one.status_code == 200, one.text
        assert [len(s["values"]) for s in one.json()["data"]["result"]] == [POINTS]
        short = _range(client, '{host=~"h.*"}', end=T0 + 15 * 19)  # a shorter window
        assert short.status_code == 200, short.text
        assert [len(s["values"]) for s in short.json()["data"]["result"]] == [20] * 4
        stepped = _range(client, '{host=~"h.*"}', step=150)  # a larger step: 2 per bucket
        assert stepped.status_code == 200, stepped.text
        buckets = len({int((T0 + 15 * k) // 150) for k in range(POINTS)})
        assert [len(s["values"]) for s in stepped.json()["data"]["result"]] == [2 * buckets] * 4


def test_a_read_past_the_series_bound_gets_422_on_every_listing(engine):
    _store(engine)
    with _client(engine, read_max_series=3) as client:
        words = ("more than 3 series", "CAUSELINE_READ_MAX_SERIES")
        _refused(_range(client, '{host=~"h.*"}'), *words)
        _refused(client.get("/api/v1/series", params={"match": '{host=~"h.*"}'}), *words)
        _refused(client.get("/api/v1/labels", params={"match": '{host=~"h.*"}'}), *words)
        path = "/api/v1/label/host/values"
        _refused(client.get(path, params={"match": '{host=~"h.*"}'}), *words)
        narrow = '{host=~"h[012]"}'
        assert len(_range(client, narrow).json()["data"]["result"]) == 3
        listed = client.get("/api/v1/series", params={"match": narrow}).json()["data"]
        assert sorted(s["labels"]["host"] for s in listed) == ["h0", "h1", "h2"]
        values = client.get(path, params={"match": narrow}).json()["data"]
        assert values == ["h0", "h1", "h2"]


def test_a_read_past_its_time_budget_gets_503_naming_the_setting(engine):
    _store(engine)
    with _client(engine, read_timeout_seconds=1e-9) as client:
        resp = _range(client, '{host=~"h.*"}')
        assert resp.status_code == 503, resp.text[:300]
        assert "CAUSELINE_READ_TIMEOUT_SECONDS" in resp.json()["detail"]["reason"]


def test_the_database_stops_at_the_points_bound(engine, monkeypatch):
    sids = _store(engine)
    fetched: list[int] = []
    real = read._fetch

    def counting(*args, **kwargs):
        rows = real(*args, **kwargs)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(read, "_fetch", counting)
    end = T0 + 15 * POINTS
    with engine.connect() as conn:
        with pytest.raises(TooManyPoints):
            read_range(conn=conn, series_ids=sids, start=T0, end=end, max_points=10)
        assert fetched == [11]  # one more than the bound, not the 160 stored
        fetched.clear()
        with pytest.raises(TooManyPoints):
            read_range(conn=conn, series_ids=sids, start=T0, end=end, step=150, max_points=10)
        assert fetched == [21]  # with a step, a bucket's low and high are two rows
        data = read_range(conn=conn, series_ids=sids, start=T0, end=end, max_points=160)
        assert sum(len(d.ts) for d in data.values()) == 160
