"""The real OpenTelemetry Python SDK exports over OTLP/HTTP into causeline."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.metrics import Observation
from opentelemetry.sdk.metrics import Counter, MeterProvider, UpDownCounter
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource

from tests.helpers import free_port
from tests.receivers.live import Service

pytestmark = pytest.mark.integration
RESOURCE = Resource.create(
    {"service.name": "ranker", "service.instance.id": "i-1", "host.name": "gpu-node-1"}
)


@pytest.fixture
def service(tmp_path):
    svc = Service(tmp_path / "c.db", free_port())
    svc.start()
    yield svc
    svc.stop()
    svc.engine.dispose()


def _provider(svc: Service, *, delta: bool) -> tuple[MeterProvider, PeriodicExportingMetricReader]:
    temporality = AggregationTemporality.DELTA if delta else AggregationTemporality.CUMULATIVE
    exporter = OTLPMetricExporter(
        endpoint=f"{svc.url}/v1/metrics",
        headers={"Authorization": f"Bearer {svc.token}"},
        compression=Compression.Gzip,
        preferred_temporality={Counter: temporality, UpDownCounter: temporality},
    )
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    view = View(
        instrument_name="model.input.length",
        aggregation=ExplicitBucketHistogramAggregation(boundaries=[64, 256, 1024]),
    )
    return MeterProvider([reader], resource=RESOURCE, views=[view]), reader


def _last(svc: Service, match: str) -> float:
    result = svc.series(match)
    assert len(result) == 1, (match, result)
    return float(result[0]["values"][-1][1])


@pytest.mark.parametrize("delta", [False, True], ids=["cumulative", "delta"])
def test_sdk_gauge_counter_updown_and_histogram_arrive(service, delta):
    provider, reader = _provider(service, delta=delta)
    meter = provider.get_meter("ranker.metrics")
    temps = iter([70.0, 72.5])
    meter.create_observable_gauge(
        "gpu.temperature",
        callbacks=[lambda _o: [Observation(next(temps), {"gpu": "0"})]],
        unit="Cel",
    )
    requests = meter.create_counter("model.requests", unit="{request}")
    queue = meter.create_up_down_counter("queue.depth")
    lengths = meter.create_histogram("model.input.length", unit="{token}")
    model = {"model": "click_rank_v3"}
    requests.add(3, model)
    queue.add(5, model)
    for n in (10, 100, 100, 2000):
        lengths.record(n, model)
    assert reader.force_flush(10_000)
    requests.add(4, model)
    queue.add(-2, model)
    lengths.record(300, model)
    assert reader.force_flush(10_000)
    try:
        _check(service)
    finally:
        provider.shutdown()


def _check(service: Service) -> None:
    base = 'service="ranker",instance="i-1",host="gpu-node-1"'
    sel = f'{{{base},model="click_rank_v3"}}'
    gauge = service.series(f'gpu_temperature_celsius{{{base},gpu="0"}}')
    assert [float(v) for _, v in gauge[0]["values"]] == [70.0, 72.5]
    labels = gauge[0]["metric"]
    assert labels == {
        "__name__": "gpu_temperature_celsius",
        "service": "ranker",
        "instance": "i-1",
        "host": "gpu-node-1",
        "gpu": "0",
    }
    assert _last(service, "model_requests_total" + sel) == 7.0  # deltas accumulated
    assert _last(service, "queue_depth" + sel) == 3.0
    assert len(service.series("model_requests_total")[0]["values"]) == 2
    buckets = {
        r["metric"]["le"]: float(r["values"][-1][1])
        for r in service.series("model_input_length_bucket" + sel)
    }
    assert buckets == {"64": 1.0, "256": 3.0, "1024": 4.0, "+Inf": 5.0}
    assert _last(service, "model_input_length_count" + sel) == 5.0
    assert _last(service, "model_input_length_sum" + sel) == 2510.0
