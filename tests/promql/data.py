"""Synthetic series for the PromQL tests: counters (one resets), gauges and a histogram."""

from __future__ import annotations

import time

import numpy as np

from correlator.bundle import Series

STEP = 15
END = int(time.time() // 3600 - 1) * 3600  # whole hours in the past: promtool writes blocks
START = END - 3600
TS = np.arange(START, END + 1, STEP, dtype=float)


def _counter(name, labels, per_second, reset_at=None, gaps=()):
    values = per_second * (TS - START) + 3.0
    if reset_at is not None:
        cut = START + reset_at <= TS
        values = np.where(cut, per_second * (TS - START - reset_at), values)
    keep = np.ones(TS.size, dtype=bool)
    for lo, hi in gaps:  # missing samples: extrapolation stops at the series' edge
        keep &= ~((START + lo <= TS) & (START + hi > TS))
    return Series(name, labels, TS[keep], values[keep])


def series() -> list[Series]:
    """Return the series both stores hold."""
    out = [
        _counter("req_total", {"job": "a", "inst": "1"}, 2.0, reset_at=1800),
        _counter("req_total", {"job": "a", "inst": "2"}, 0.5, gaps=[(600, 1200)]),
        _counter("req_total", {"job": "b", "inst": "1"}, 7.25),
        Series("temp", {"job": "a", "inst": "1"}, TS, 20 + 5 * np.sin((TS - START) / 300)),
        Series("temp", {"job": "b", "inst": "2"}, TS[::2], 30 + np.cos((TS[::2] - START) / 90)),
    ]
    for job, scale in (("a", 1.0), ("b", 3.0)):
        for le, rate in (("0.1", 1.0), ("0.5", 2.5), ("1", 4.0), ("+Inf", 5.0)):
            labels = {"job": job, "le": le}
            out.append(_counter("lat_bucket", labels, rate * scale, reset_at=2400))
    return out
