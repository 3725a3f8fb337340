"""Shared fixtures of the analysis tests: scenario folders and small seeded bundles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from correlator.bundle import Bundle, Series
from tests.helpers import p99_sla

SCENARIOS = Path(__file__).resolve().parents[3] / "shared" / "scenarios"
PUBLIC = sorted((SCENARIOS / "public").glob("*/")) if (SCENARIOS / "public").is_dir() else []


def make_series(name, labels, ts, values) -> Series:
    """Return a series from plain sequences."""
    return Series(name, dict(labels), np.asarray(ts, float), np.asarray(values, float))


def small_bundle(*, seed: int = 0, cause_at: int = 80, breach_at: int = 90) -> Bundle:
    """Return a seeded two-host incident: host h1's disk saturates, then p99 latency breaches."""
    rng = np.random.default_rng(seed)
    t0, n, step = 1_700_000_000.0, 120, 15.0
    ts = t0 + step * np.arange(n)
    disk = 20 + rng.normal(0, 2, n)
    disk[cause_at:] = 95 + rng.normal(0, 1, n - cause_at)
    other_disk = 20 + rng.normal(0, 2, n)
    lat = 20 + rng.normal(0, 1, n)
    lat[breach_at - 4 :] = 120 + rng.normal(0, 2, n - breach_at + 4)
    cpu = 40 + rng.normal(0, 3, n)
    series = [
        make_series("model_latency_p99_ms", {"model": "m", "instance": "i1"}, ts + 2, lat),
        make_series("node_disk_io_utilization_percent", {"host": "h1"}, ts - 3, disk),
        make_series("node_disk_io_utilization_percent", {"host": "h2"}, ts + 1, other_disk),
        make_series("node_cpu_utilization_percent", {"host": "h1"}, ts, cpu),
    ]
    topology = {
        "nodes": [
            {"id": "model:m", "kind": "model", "owner": "algo"},
            {"id": "instance:i1", "kind": "instance", "owner": "infra"},
            {"id": "host:h1", "kind": "host", "owner": "infra"},
            {"id": "host:h2", "kind": "host", "owner": "infra"},
        ],
        "edges": [
            {"from": "instance:i1", "to": "model:m", "kind": "serves"},
            {"from": "instance:i1", "to": "host:h1", "kind": "runs_on"},
        ],
    }
    sla = p99_sla("m", threshold=50, for_seconds=45)
    changes = [
        {
            "id": "c1",
            "ts": t0 + 10 * step,
            "kind": "config",
            "target": "model:m",
            "owner": "algo",
            "labels": {"model": "m"},
            "summary": "log sampling 1% -> 0.1%",
        }
    ]
    return Bundle(series=series, changes=changes, topology=topology, sla=sla)


@pytest.fixture
def bundle() -> Bundle:
    """A small seeded incident bundle."""
    return small_bundle()
