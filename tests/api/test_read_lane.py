"""Reads have their own lane: hostile regex reads are bounded and never starve ingest."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from collector.schema import series_key
from correlator.api.app import create_app
from correlator.selector import Matcher, parse_selector
from correlator.settings import ServiceSettings
from correlator.store.engine import make_engine, write_transaction
from correlator.store.migrate import upgrade
from correlator.store.tokens import create_token
from correlator.store.tsdb import series as series_store
from correlator.store.tsdb.series import ensure_series
from tests.helpers import make_batch

# RE2 runs this on its slow path: about 0.2 s against one 2 KB label value.
HOSTILE_RE = "(.|..){1,1000}(.|..){1,1000}(.|..){1,1000}Z"
HOSTILE = f'x{{v=~"{HOSTILE_RE}"}}'
LONG = 2048


def _long_series(engine, count: int, labels: int = 1) -> None:
    """Store ``count`` series ``x`` whose label values are 2 KB long and all different."""
    items = {}
    for i in range(count):
        names = ["v"] if labels == 1 else [f"l{k}" for k in range(labels)]
        lab = {name: f"{i:04d}{k:02d}".ljust(LONG, "a") for k, name in enumerate(names)}
        items[series_key("x", lab)] = ("x", lab)
    with write_transaction(engine) as conn:
        ensure_series(conn=conn, items=items)


class Gate:
    """Stands in for the store's deadline check: counts the threads inside a regex match.

    With ``hold``, the first thread to get here waits until ``release`` is set.
    """

    def __init__(self, monkeypatch, *, hold: bool = False):
        self.real = series_store.check_deadline
        self.threads: set[int] = set()
        self.changed = threading.Condition()
        self.hold = hold
        self.release = threading.Event()
        self.held: int | None = None
        monkeypatch.setattr(series_store, "check_deadline", self)

    def __call__(self, deadline):
        me = threading.get_ident()
        with self.changed:
            self.threads.add(me)
            if self.hold and self.held is None:
                self.held = me
            self.changed.notify_all()
        if me == self.held:
            assert self.release.wait(60), "the test never released the held read"
        return self.real(deadline)

    def wait_for(self, threads: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.threads) >= threads, 60)


def _settings(engine, **kwargs) -> ServiceSettings:
    return ServiceSettings(database_url=str(engine.url), **kwargs)


def _read(client, path: str, match: str, headers=None, **extra):
    params = {"match": match, **extra}
    return client.get(path, params=params, headers=headers or {})


def _lane_refusal(resp, setting: str) -> None:
    assert resp.status_code == 503, resp.text[:300]
    assert resp.headers["retry-after"] == "3"
    assert setting in resp.json()["detail"]["reason"]
    assert resp.json()["detail"]["field"] == "read lane"


def test_hostile_reads_on_a_small_pool_never_fail_or_block_ingest(db_url, monkeypatch):
    # Two connections for everything the app does not read through its read lane; on the
    # old code the hostile reads held both and ingest waited its pool timeout, then 500.
    engine = make_engine(db_url, pool_size=2, max_overflow=0, pool_timeout=1)
    try:
        upgrade(engine)
        with write_transaction(engine) as conn:
            token = create_token(conn=conn, name="agent", scope="ingest")
        _long_series(engine, 20)  # about 4 s of matching, past the 2 s deadline
        gate = Gate(monkeypatch)
        settings = _settings(
            engine,
            read_timeout_seconds=2,
            read_lane_metadata=2,
            read_lane_queue=0,
            read_lane_retry_after_seconds=3,
        )
        app = create_app(settings, engine=engine)
        answers: list = []
        with TestClient(app, raise_server_exceptions=False) as client:

            def hostile() -> None:
                answers.append(_read(client, "/api/v1/series", HOSTILE))

            readers = [threading.Thread(target=hostile) for _ in range(8)]
            for reader in readers:
                reader.start()
            gate.wait_for(2)  # two hostile reads are matching regexes now
            batch = make_batch(n_series=3, n_points=4)
            headers = {"Authorization": f"Bearer {token}"}
            stored = client.post("/api/v1/ingest", json=batch, headers=headers)
            for reader in readers:
                reader.join(60)
        assert stored.status_code == 200, stored.text[:300]
        assert stored.json()["inserted"] == 12
        assert len(answers) == 8
        lane = [a for a in answers if "retry-after" in a.headers]
        slow = [a for a in answers if "retry-after" not in a.headers]
        assert len(lane) == 6 and len(slow) == 2, [a.text[:200] for a in answers]
        for resp in lane:
            _lane_refusal(resp, "CAUSELINE_READ_LANE_METADATA")
        for resp in slow:  # the admitted ones stopped at their deadline
            assert resp.status_code == 503, resp.text[:300]
            assert "CAUSELINE_READ_TIMEOUT_SECONDS" in resp.json()["detail"]["reason"]
    finally:
        engine.dispose()


FAMILIES = [
    ("/api/v1/series", {}, "CAUSELINE_READ_LANE_METADATA"),
    ("/api/v1/labels", {}, "CAUSELINE_READ_LANE_METADATA"),
    ("/api/v1/query_range", {"start": 0, "end": 10}, "CAUSELINE_READ_LANE_WINDOW"),
]


@pytest.mark.parametrize(("path", "extra", "setting"), FAMILIES)
def test_a_full_lane_answers_503_with_retry_after_and_frees_its_place(
    engine, monkeypatch, path, extra, setting
):
    _long_series(engine, 1)
    gate = Gate(monkeypatch, hold=True)
    settings = _settings(
        engine,
        read_lane_metadata=1,
        read_lane_window=1,
        read_lane_queue=0,
        read_lane_retry_after_seconds=3,
    )
    first: list = []
    with TestClient(create_app(settings, engine=engine)) as client:
        held = threading.Thread(
            target=lambda: first.append(_read(client, path, 'x{v=~"0.*"}', **extra))
        )
        held.start()
        gate.wait_for(1)  # the first read holds the family's one place
        _lane_refusal(_read(client, path, 'x{v=~"0.*"}', **extra), setting)
        # Another family runs beside it.
        other = "/api/v1/labels" if path == "/api/v1/query_range" else "/api/v1/query_range"
        beside = _read(client, other, 'x{v=~"0.*"}', start=0, end=10)
        assert beside.status_code == 200, beside.text[:300]
        gate.release.set()
        held.join(60)
        assert first[0].status_code == 200, first[0].text[:300]
        again = _read(client, path, 'x{v=~"0.*"}', **extra)
        assert again.status_code == 200, again.text[:300]


def test_promql_gets_prometheus_error_envelope_with_retry_after(engine, monkeypatch):
    _long_series(engine, 1)
    gate = Gate(monkeypatch, hold=True)
    settings = _settings(
        engine, read_lane_promql=1, read_lane_queue=0, read_lane_retry_after_seconds=3
    )
    first: list = []
    query = {"query": 'count(x{v=~"0.*"})'}
    with TestClient(create_app(settings, engine=engine)) as client:
        held = threading.Thread(
            target=lambda: first.append(client.get("/api/v1/query", params=query))
        )
        held.start()
        gate.wait_for(1)
        for resp in (
            client.get("/api/v1/query", params=query),
            client.post("/api/v1/query", data=query),
            client.get("/api/v1/query_range", params={**query, "start": 0, "end": 9, "step": 1}),
        ):
            assert resp.status_code == 503, resp.text[:300]
            assert resp.headers["retry-after"] == "3"
            body = resp.json()
            assert body["status"] == "error" and body["errorType"] == "unavailable"
            assert "CAUSELINE_READ_LANE_PROMQL" in body["error"]
        gate.release.set()
        held.join(60)
    assert first[0].status_code == 200, first[0].text[:300]
    assert first[0].json()["status"] == "success"  # the series has no samples: no result


def test_one_client_cannot_take_a_whole_family_and_a_queued_read_waits_its_turn(
    engine, monkeypatch
):
    _long_series(engine, 1)
    gate = Gate(monkeypatch, hold=True)
    settings = _settings(
        engine,
        read_lane_metadata=1,
        read_lane_queue=1,
        read_lane_per_client=1,
        read_lane_retry_after_seconds=3,
    )
    app = create_app(settings, engine=engine)
    alice = {"Authorization": "Bearer alice"}  # reads are open: the token only names her
    bob = {"Authorization": "Bearer bob"}
    carol = {"Authorization": "Bearer carol"}
    got: dict = {}
    with TestClient(app) as client:

        def read_as(who: str, headers: dict) -> None:
            got[who] = _read(client, "/api/v1/series", 'x{v=~"0.*"}', headers=headers)

        first = threading.Thread(target=read_as, args=("alice", alice))
        first.start()
        gate.wait_for(1)
        _lane_refusal(_read(client, "/api/v1/series", "x", headers=alice), "PER_CLIENT")
        queued = threading.Thread(target=read_as, args=("bob", bob))
        queued.start()
        lanes = app.state.read_lanes
        family = lanes.families["metadata"]
        while family.waiting < 1:  # bob is in the queue
            queued.join(0.01)
        _lane_refusal(_read(client, "/api/v1/series", "x", headers=carol), "QUEUE")
        gate.release.set()
        first.join(60)
        queued.join(60)
    assert got["alice"].status_code == 200, got["alice"].text[:300]
    assert got["bob"].status_code == 200, got["bob"].text[:300]
    assert family.running == 0 and family.waiting == 0


def test_a_slow_regex_read_stops_at_its_deadline(engine, monkeypatch):
    # One series, ten 2 KB labels, ten matchers RE2 runs slowly and that all hold: the old
    # code ran the whole row (ten matches, about 2 s) before it looked at the deadline.
    _long_series(engine, 1, labels=10)
    calls: list[str] = []
    real = Matcher.matches

    def counting(self, labels):
        calls.append(self.label)
        return real(self, labels)

    monkeypatch.setattr(Matcher, "matches", counting)
    slow = ",".join(f'l{k}!~"{HOSTILE_RE}"' for k in range(10))
    settings = _settings(engine, read_timeout_seconds=0.05)
    with TestClient(create_app(settings, engine=engine)) as client:
        resp = _read(client, "/api/v1/series", f"x{{{slow}}}")
    assert resp.status_code == 503, resp.text[:300]
    assert "CAUSELINE_READ_TIMEOUT_SECONDS" in resp.json()["detail"]["reason"]
    assert "retry-after" not in resp.headers  # narrowing helps, retrying does not
    assert len(calls) <= 2, calls


def test_no_connection_is_held_while_regexes_run(engine, monkeypatch):
    _long_series(engine, 3)
    held: list[int] = []
    app_engines: list = []
    real = series_store.check_deadline

    def looking(deadline):
        held.append(sum(e.pool.checkedout() for e in {id(e): e for e in app_engines}.values()))
        return real(deadline)

    monkeypatch.setattr(series_store, "check_deadline", looking)
    app = create_app(_settings(engine), engine=engine)
    app_engines += [engine, getattr(app.state, "read_engine", engine)]
    with TestClient(app) as client:
        for path in ("/api/v1/series", "/api/v1/labels", "/api/v1/label/v/values"):
            resp = _read(client, path, 'x{v=~"0.*"}')
            assert resp.status_code == 200, resp.text[:300]
        count = len(held)
        query = client.get("/api/v1/query", params={"query": 'count(x{v=~"0.*"})'})
        assert query.status_code == 200, query.text[:300]
        assert len(held) > count  # PromQL matched its regexes here too
    assert held and set(held) == {0}, held


def test_promql_and_window_reads_take_no_connection_ingest_uses(engine, monkeypatch):
    _long_series(engine, 3)
    taken: list[int] = []
    real = series_store.check_deadline

    def looking(deadline):
        taken.append(engine.pool.checkedout())
        return real(deadline)

    monkeypatch.setattr(series_store, "check_deadline", looking)
    with TestClient(create_app(_settings(engine), engine=engine)) as client:
        query = client.get("/api/v1/query", params={"query": 'count(x{v=~"0.*"})'})
        assert query.status_code == 200, query.text[:300]
        window = _read(client, "/api/v1/query_range", 'x{v=~"0.*"}', start=0, end=10)
        assert window.status_code == 200, window.text[:300]
    assert taken and set(taken) == {0}, taken


def test_slow_regex_matches_run_one_at_a_time_in_the_process(engine, monkeypatch):
    # So a flood of hostile regexes takes one CPU from ingest, not all of them.
    _long_series(engine, 3)
    inside, most = [0], [0]
    lock = threading.Lock()
    real = Matcher.matches

    def tracking(self, labels):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            return real(self, labels)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(Matcher, "matches", tracking)
    selector = parse_selector(HOSTILE)
    found: list = []

    def read() -> None:
        found.append(series_store.match_series(engine=engine, selector=selector))

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(60)
    assert found == [[], [], []]
    assert most[0] == 1
