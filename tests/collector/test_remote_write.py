"""The agent's remote-write sink: encoding, retries and drops, and destinations kept apart."""

from __future__ import annotations

import gzip
import json
import math
import struct

import cramjam
import httpx
import pytest

from collector.agent import Agent
from collector.batcher import Batcher
from collector.config import ConfigError, load_config
from collector.destination import Destination, Destinations
from collector.health import AgentHealth
from collector.prompb import encode_write_request, series_labels, varint
from collector.remote_write import RemoteWriteSender, write_body
from collector.runtime import build_agent
from collector.schema import Batch, Event, SeriesBatch
from collector.shipper import Backoff, Shipper
from collector.snappy import compress
from collector.spool import Spool
from correlator.receivers.remote_pb2 import WriteRequest
from correlator.receivers.remote_write import decode_write_request
from tests.collector.sources import Counter

T0 = 1_733_131_200.0


def _batch(n=5, name="m", t0=T0, bid=None, labels=None):
    ts = [t0 + i for i in range(n)]
    return Batch(
        series=[SeriesBatch(name, labels or {"host": "h"}, ts, [float(i) for i in range(n)])],
        batch_id=bid,
    )


def _decode(body: bytes) -> WriteRequest:
    return WriteRequest.FromString(bytes(cramjam.snappy.decompress_raw(body)))


class Endpoint:
    """A MockTransport remote-write receiver whose answers the test scripts."""

    def __init__(self, answers=None):
        self.answers = list(answers or [])
        self.bodies: list[bytes] = []  # every request that reached it, answered or not
        self.stored: list[WriteRequest] = []
        self.headers: list = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        code = self.answers.pop(0) if self.answers else 204
        if code == "down":
            raise httpx.ConnectError("connection refused", request=request)
        self.bodies.append(request.content)
        self.headers.append(request.headers)
        if code == 204:
            self.stored.append(_decode(request.content))
            return httpx.Response(204)
        return httpx.Response(code, text=f"answer {code}: out-of-order sample")

    def values(self, name: str) -> list[tuple[int, float]]:
        """Return every stored (ms, value) of a metric, in arrival order."""
        out = []
        for req in self.stored:
            for ts in req.timeseries:
                if {(lb.name, lb.value) for lb in ts.labels} >= {("__name__", name)}:
                    out += [(s.timestamp, s.value) for s in ts.samples]
        return out


def _sender(spool, endpoint, **kw):
    client = httpx.Client(transport=httpx.MockTransport(endpoint))
    return RemoteWriteSender(
        spool,
        url="http://vm:8428/api/v1/write",
        client=client,
        backoff=Backoff(base=0.001, cap=0.01),
        **kw,
    )


def test_write_request_is_what_protobuf_writes_and_the_receiver_reads():
    nan = float("nan")
    series = [
        SeriesBatch(
            "model_latency_p99_ms",
            {"model": "m1", "host": "h", "instance": "", "Zone": "eu"},
            [T0 + 2, T0, T0 + 1.5, T0 + 3],  # out of order in the batch
            [7.5, -1.0, nan, 0.0],
        ),
        SeriesBatch("gpu_up", {"host": "h", "gpu": "0"}, [T0], [1.0]),
        SeriesBatch("empty", {}, [], []),
    ]
    body = encode_write_request(series)
    expected = WriteRequest()
    first = expected.timeseries.add()
    for name, value in sorted(
        {"__name__": "model_latency_p99_ms", "model": "m1", "host": "h", "Zone": "eu"}.items()
    ):
        first.labels.add(name=name, value=value)
    ms = round(T0 * 1000)
    for value, at in ((-1.0, ms), (nan, ms + 1500), (7.5, ms + 2000), (0.0, ms + 3000)):
        first.samples.add(value=value, timestamp=at)
    second = expected.timeseries.add()
    for name, value in (("__name__", "gpu_up"), ("gpu", "0"), ("host", "h")):
        second.labels.add(name=name, value=value)
    second.samples.add(value=1.0, timestamp=ms)
    assert body == expected.SerializeToString()

    got = WriteRequest.FromString(body)
    assert [lb.name for lb in got.timeseries[0].labels] == ["Zone", "__name__", "host", "model"]
    stamps = [s.timestamp for s in got.timeseries[0].samples]
    assert stamps == sorted(stamps)
    assert math.isnan(got.timeseries[0].samples[1].value)  # NaN sent as it is
    decoded = decode_write_request(body)  # causeline's own receiver reads it back
    assert decoded.non_finite == 1
    by_name = {s.name: s for s in decoded.batch.series}
    assert by_name["model_latency_p99_ms"].labels == {"model": "m1", "host": "h", "Zone": "eu"}
    assert by_name["model_latency_p99_ms"].values == [-1.0, 7.5, 0.0]
    assert by_name["gpu_up"].timestamps == [T0]


def test_labels_sort_by_name_with_the_metric_name_first_for_agent_labels():
    pairs = series_labels("m", {"host": "h", "gpu": "0", "le": "+Inf", "__name__": "x"})
    assert pairs == [("__name__", "m"), ("gpu", "0"), ("host", "h"), ("le", "+Inf")]


@pytest.mark.parametrize("n", [-1, 0, 1, 127, 128, 300, 2**63 - 1])
def test_varint_matches_protobuf(n):
    from correlator.receivers.remote_pb2 import Sample

    encoded = Sample(timestamp=n).SerializeToString()
    assert encoded == (b"\x10" + varint(n) if n else b"")


@pytest.mark.parametrize("size", [0, 1, 65537, 200_001])
def test_snappy_blocks_decode_with_the_receivers_decoder(size):
    data = (bytes(range(256)) * (size // 256 + 1))[:size]
    assert bytes(cramjam.snappy.decompress_raw(compress(data))) == data


def test_requests_carry_the_protocol_headers_and_auth(tmp_path):
    endpoint = Endpoint()
    spool = Spool(str(tmp_path))
    spool.put(_batch())
    sender = _sender(spool, endpoint, headers={"X-Scope-OrgID": "team-a"}, bearer_token="s3cret")
    assert sender.drain() is True
    headers = endpoint.headers[0]
    assert headers["content-encoding"] == "snappy"
    assert headers["content-type"] == "application/x-protobuf"
    assert headers["x-prometheus-remote-write-version"] == "0.1.0"
    assert headers["authorization"] == "Bearer s3cret"
    assert headers["x-scope-orgid"] == "team-a"
    spool.put(_batch())
    basic = _sender(spool, endpoint, basic_auth=("agent", "pw"))
    assert basic.drain() is True
    assert endpoint.headers[1]["authorization"] == "Basic YWdlbnQ6cHc="


def test_outage_then_recovery_resends_the_same_bytes_and_delivers_in_order(tmp_path):
    endpoint = Endpoint(["down", 503, 429, 500])
    spool = Spool(str(tmp_path))
    for i in range(3):
        spool.put(_batch(t0=T0 + 10 * i, bid=f"b{i}"))
    sender = _sender(spool, endpoint)
    assert [sender.send_one() for _ in range(4)] == [False] * 4 and len(spool) == 3
    assert sender.drain() is True and len(spool) == 0
    # 503, 429, 500 reached the endpoint; each retry sent the first batch's very bytes.
    assert len(set(endpoint.bodies[:4])) == 1
    assert endpoint.bodies[0] == write_body(gzip.compress(json.dumps(_batch().to_json()).encode()))
    ms = round(T0 * 1000)
    assert [t for t, _ in endpoint.values("m")] == [ms + 1000 * i for i in range(25) if i % 10 < 5]
    h = spool.health
    assert h.counters["samples_sent"] == 15 and h.counters["batches_sent"] == 3
    assert h.counters["send_failures"] == 4 and h.last_success_ts > 0


@pytest.mark.parametrize("code", [400, 401, 404, 413])
def test_client_errors_drop_the_batch_with_the_status_and_answer_logged(tmp_path, caplog, code):
    endpoint = Endpoint([code])
    spool = Spool(str(tmp_path))
    spool.put(_batch(bid="bad"))
    spool.put(_batch(t0=T0 + 100, bid="good"))
    sender = _sender(spool, endpoint)
    assert sender.drain() is True and len(spool) == 0
    assert len(endpoint.bodies) == 2 and len(endpoint.stored) == 1
    assert f"HTTP {code}" in caplog.text and "out-of-order sample" in caplog.text
    assert spool.health.counters["samples_dropped"] == 5
    assert spool.health.counters["batches_rejected"] == 1
    assert not (tmp_path / "rejected").exists()


def test_events_stay_out_of_remote_write(tmp_path):
    endpoint = Endpoint()
    spool = Spool(str(tmp_path))
    events = [Event("xid-1", T0, "gpu_xid", "XID 79 on GPU 0", {"host": "h"})]
    spool.put(Batch(series=[], events=events, batch_id="only-events"))
    spool.put(_batch())
    assert _sender(spool, endpoint).drain() is True
    assert [len(r.timeseries) for r in endpoint.stored] == [0, 1]


def test_an_unreadable_spool_file_is_set_aside(tmp_path, caplog):
    endpoint = Endpoint()
    spool = Spool(str(tmp_path))
    entry = spool.put(_batch())
    with open(entry.path, "wb") as fh:
        fh.write(b"not gzip")
    spool.put(_batch(t0=T0 + 100))
    assert _sender(spool, endpoint).drain() is True
    assert len(endpoint.stored) == 1 and "unreadable" in caplog.text
    assert len(list((tmp_path / "rejected").iterdir())) == 1


class Ingest:
    """A MockTransport causeline ingest endpoint, down until ``up`` is set."""

    def __init__(self):
        self.up = False
        self.batch_ids: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if not self.up:
            return httpx.Response(503, json={"detail": "restarting"})
        self.batch_ids.append(json.loads(gzip.decompress(request.content))["batch_id"])
        return httpx.Response(200, json={"series": 1, "samples": 1, "inserted": 1, "events": 0})


def test_a_destination_that_is_down_neither_blocks_nor_repeats_the_other(tmp_path):
    health = AgentHealth()
    ingest, endpoint = Ingest(), Endpoint()
    own = Spool(str(tmp_path / "causeline"), health=health)
    rw_health = AgentHealth()
    health.add_destination("remote_write", rw_health)
    rw = Spool(str(tmp_path / "rw"), health=rw_health)
    shipper = Shipper(
        own,
        server="http://svc",
        token="T",
        client=httpx.Client(transport=httpx.MockTransport(ingest)),
        backoff=Backoff(base=0.001, cap=0.01),
    )
    both = Destinations(
        [
            Destination("causeline", own, shipper),
            Destination("remote_write", rw, _sender(rw, endpoint)),
        ],
        health=health,
    )
    clock = iter(range(100))
    stamps = iter(T0 + i for i in range(100))
    ids = iter(f"b{i}" for i in range(100))
    agent = Agent(
        [Counter()],
        host="h",
        spool=both,
        shipper=both,
        batcher=Batcher(max_age=2.0, new_id=lambda: next(ids)),
        wallclock=lambda: next(stamps),
        monotonic=lambda: float(next(clock)),
    )
    for _ in range(6):
        agent.step()
    assert both.drain() is False  # causeline is down...
    assert len(own) == 2 and len(rw) == 0  # ...and remote write got everything anyway
    assert [v for _, v in endpoint.values("c")] == [1, 2, 3, 4, 5, 6]
    reading = health.reading({"host": "h"})
    sent = {
        s.labels.get("destination", "causeline"): s.value
        for s in reading.samples
        if s.name == "causeline_agent_batches_sent_total"
    }
    assert sent == {"causeline": 0, "remote_write": 2}
    ingest.up = True
    assert both.drain() is True
    assert ingest.batch_ids == ["b0", "b1"] and len(endpoint.stored) == 2  # nothing sent twice


def test_a_full_disk_for_one_destination_spares_the_other(tmp_path, caplog):
    class FullDisk(Spool):
        def put(self, batch, *, seq=None):
            raise OSError(28, "No space left on device")

    health = AgentHealth()
    broken = FullDisk(str(tmp_path / "a"), health=health)
    fine = Spool(str(tmp_path / "b"), health=AgentHealth())
    both = Destinations(
        [Destination("causeline", broken, None), Destination("remote_write", fine, None)],
        health=health,
    )
    both.put(_batch())
    assert len(fine) == 1 and health.counters["samples_dropped"] == 5
    assert "for causeline: [Errno 28] No space left on device" in caplog.text


def test_settings_from_file_environment_and_their_checks(tmp_path):
    cfg = tmp_path / "agent.toml"
    cfg.write_text(
        '[agent]\nremote_write_url = "http://vm:8428/api/v1/write"\n'
        'remote_write_timeout = "5s"\n[agent.remote_write_headers]\nX-Scope-OrgID = "a"\n'
    )
    env = {"CAUSELINE_AGENT_REMOTE_WRITE_BEARER_TOKEN": "t"}
    config = load_config(file=str(cfg), env=env)
    assert config.remote_write_url == "http://vm:8428/api/v1/write"
    assert config.remote_write_timeout == 5.0 and config.remote_write_bearer_token == "t"
    assert config.remote_write_headers == {"X-Scope-OrgID": "a"}
    env = {"CAUSELINE_AGENT_REMOTE_WRITE_HEADERS": '{"X-Scope-OrgID": "b"}'}
    assert load_config(file=str(cfg), env=env).remote_write_headers == {"X-Scope-OrgID": "b"}
    bad = [
        ({"remote_write_url": "vm:8428"}, "http:// or https://"),
        ({"remote_write_username": "u"}, "go together"),
        (
            {
                "remote_write_username": "u",
                "remote_write_password": "p",
                "remote_write_bearer_token": "t",
            },
            "not both",
        ),
        (
            {"remote_write_headers": {"Content-Encoding": "gzip"}},
            "set by the remote-write protocol",
        ),
        ({"remote_write_headers": '["x"]'}, "table of names"),
    ]
    for overrides, message in bad:
        with pytest.raises(ConfigError, match=message):
            load_config(env={}, overrides=overrides)


def test_agent_is_built_for_causeline_remote_write_or_both(tmp_path):
    url = "http://vm:8428/api/v1/write"
    spool_dir = str(tmp_path / "spool")
    only_rw = build_agent(
        load_config(env={}, overrides={"remote_write_url": url, "spool_dir": spool_dir}), []
    )
    assert isinstance(only_rw.shipper, RemoteWriteSender) and only_rw.shipper.url == url
    assert only_rw.shipper.spool.directory == f"{spool_dir}/remote-write"
    names = {(s.name, s.labels.get("destination")) for s in only_rw.collect().samples}
    assert ("causeline_agent_samples_sent_total", "remote_write") in names
    assert ("causeline_agent_samples_sent_total", None) not in names  # no causeline ingest
    both = build_agent(
        load_config(
            env={},
            overrides={
                "remote_write_url": url,
                "server": "http://c",
                "token": "T",
                "spool_dir": spool_dir,
            },
        ),
        [],
    )
    assert isinstance(both.shipper, Destinations) and both.spool is both.shipper
    assert [d.name for d in both.shipper.items] == ["causeline", "remote_write"]
    assert both.shipper.items[0].spool.directory == spool_dir
    with pytest.raises(ConfigError, match="remote_write_url"):
        build_agent(load_config(env={}, overrides={"spool_dir": spool_dir}), [])
    with pytest.raises(ConfigError, match="--server and --token"):
        build_agent(
            load_config(env={}, overrides={"server": "http://c", "spool_dir": spool_dir}), []
        )


def test_stale_nan_bits_survive_encoding():
    stale = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000002))[0]
    body = encode_write_request([SeriesBatch("m", {}, [T0], [stale])])
    value = WriteRequest.FromString(body).timeseries[0].samples[0].value
    assert struct.pack("<d", value) == struct.pack("<Q", 0x7FF0000000000002)
