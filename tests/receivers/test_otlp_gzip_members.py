"""An OTLP body must be one whole gzip member, as a bundle's .gz file must."""

from __future__ import annotations

import gzip
import json

import pytest
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from correlator.receivers.compression import BadEncoding, gunzip
from tests.helpers import count_rows
from tests.receivers.test_otlp_api import GAUGE, JSON, PROTOBUF, export

GZIP = {"Content-Encoding": "gzip"}


def _body(media: dict = JSON) -> bytes:
    if media is PROTOBUF:
        return json_format.ParseDict(
            export(GAUGE), ExportMetricsServiceRequest()
        ).SerializeToString()
    return json.dumps(export(GAUGE)).encode()


@pytest.mark.parametrize("media", [JSON, PROTOBUF], ids=["json", "protobuf"])
def test_one_whole_member_is_stored(client, media):
    resp = client.post("/v1/metrics", content=gzip.compress(_body(media)), headers=media | GZIP)
    assert resp.status_code == 200, resp.text
    assert count_rows(client.engine) == 1


@pytest.mark.parametrize(
    ("spoil", "words"),
    [
        (lambda body: gzip.compress(body) + b"garbage", "7 bytes follow the first gzip member"),
        (lambda body: gzip.compress(body) + gzip.compress(b" "), "follow the first gzip member"),
        (lambda body: gzip.compress(body) + b"\0" * 64, "64 bytes follow the first gzip member"),
    ],
    ids=["trailing-garbage", "second-member", "zero-padding"],
)
@pytest.mark.parametrize("media", [JSON, PROTOBUF], ids=["json", "protobuf"])
def test_data_after_the_gzip_member_is_refused(client, spoil, words, media):
    resp = client.post("/v1/metrics", content=spoil(_body(media)), headers=media | GZIP)
    assert resp.status_code == 400, resp.text
    is_json = media is JSON
    message = resp.json()["message"] if is_json else Status.FromString(resp.content).message
    assert message.startswith("body: ") and words in message, message
    assert count_rows(client.engine) == 0


def test_gunzip_refuses_a_second_member_within_the_limit():
    with pytest.raises(BadEncoding, match="one gzip member"):
        gunzip(gzip.compress(b"a") + gzip.compress(b"b"), 1000)
    assert gunzip(gzip.compress(b"ab"), 1000) == b"ab"
