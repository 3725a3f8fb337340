"""A kind of ranked signal is added by defining one ``SignalKind`` and naming it in Config.

The kind here is a toy made in this file alone: load imbalance across a service's replicas
(the busiest replica over the median one), a row derived from series the plain kinds keep.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from correlator.analysis import Config, analyze
from correlator.analysis.kinds import BuildContext, KindRow, SignalKind, Told, by_name
from correlator.analysis.timeline import align
from correlator.bundle import Bundle
from tests.analysis.conftest import make_series

T0, STEP, N, BREACH = 1_700_000_000.0, 5.0, 720, 600


def _imbalance(series, ctx: BuildContext) -> tuple[set[int], list[KindRow]]:
    """Make one row per metric and service with replicas: the busiest over the median one."""
    groups: dict[tuple, list] = defaultdict(list)
    for s in series:
        if "replica" in s.labels:
            rest = tuple(sorted((k, v) for k, v in s.labels.items() if k != "replica"))
            groups[(s.name, rest)].append(s)
    rows = []
    for (name, rest), members in sorted(groups.items()):
        if len(members) >= 2:
            matrix = align(members, ctx.grid)
            ratio = np.nanmax(matrix, axis=0) / np.nanmedian(matrix, axis=0)
            rows.append(KindRow(f"{name}:imbalance", dict(rest), ratio, payload=len(members)))
    return set(), rows  # the replicas stay plain rows too


def _told(row: Told) -> tuple[str, dict]:
    return f"imbalance of {row.name} over {row.payload} replicas", {"replicas": row.payload}


IMBALANCE = SignalKind(
    "imbalance", build=_imbalance, ramps=False, alarm=1.5, full=4.0, evidence=_told
)
WITH_TOY = Config(kinds=(*Config().kinds, IMBALANCE))


def _bundle(hot: float) -> Bundle:
    """Return three replicas of a queue; from a minute before the breach one holds ``hot``x."""
    rng = np.random.default_rng(3)
    ts = T0 + STEP * np.arange(N)
    series = []
    for r in range(3):
        queue = 10 + rng.normal(0, 0.3, N)
        if r == 0:
            queue[BREACH - 12 :] *= hot
        series.append(make_series("queue_depth", {"service": "pay", "replica": str(r)}, ts, queue))
    latency = 0.05 + rng.normal(0, 0.002, N)
    latency[BREACH:] += 0.5
    series.append(make_series("latency_p99_seconds", {"service": "front"}, ts, latency))
    sla = {
        "name": "front p99",
        "metric": "latency_p99_seconds",
        "labels": {"service": "front"},
        "aggregate": "max",
        "op": ">",
        "threshold": 0.3,
        "for_seconds": 10,
    }
    return Bundle(series=series, changes=[], topology={}, sla=sla, baseline=None)


def _toy_rows(result: dict) -> list[dict]:
    return [s for s in result["suspects"] if s.get("metric") == "queue_depth:imbalance"]


def test_a_kind_named_in_config_builds_ranks_and_tells_its_rows():
    found = _toy_rows(analyze(_bundle(hot=4.0), config=WITH_TOY))
    assert len(found) == 1
    assert found[0]["evidence"] == "imbalance of queue_depth:imbalance over 3 replicas"
    assert found[0]["replicas"] == 3 and found[0]["labels"] == {"service": "pay"}
    assert found[0]["score"] > 0
    assert _toy_rows(analyze(_bundle(hot=4.0))) == []  # the default kinds do not have it


def test_a_kinds_alarm_level_is_its_least_meaningful_move():
    # A move of 0.3 (1.3x the median) is past the row's own noise many times over, but
    # under its alarm of 1.5; a move of 2 is past it.
    assert _toy_rows(analyze(_bundle(hot=1.3), config=WITH_TOY)) == []
    assert len(_toy_rows(analyze(_bundle(hot=3.0), config=WITH_TOY))) == 1


def test_kinds_are_checked_when_looked_up():
    with pytest.raises(ValueError, match="named twice"):
        by_name((*Config().kinds, IMBALANCE, IMBALANCE))
    with pytest.raises(ValueError, match="value and rate"):
        by_name((IMBALANCE,))
