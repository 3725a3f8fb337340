"""Each series' normal level and band from a baseline recorded apart from the incident."""

from __future__ import annotations

import numpy as np

from correlator.analysis import onset, signals
from correlator.analysis.config import Config
from correlator.analysis.timeline import choose_grid, choose_step


def reference(baseline, cfg: Config) -> tuple[dict | None, dict | None]:
    """Return per-series (median, upper spread, count, lower spread) and kinds' references."""
    base = [s for s in baseline or [] if s.ts.size]
    if not base:
        return None, None
    bgrid = choose_grid(base, choose_step(base))
    bsig = signals.build(
        base,
        bgrid,
        kinds=cfg.kinds,
        ref_cols=slice(None),
        window=signals.window_columns(cfg.drift_window_s, bgrid.step),
        volatile=cfg.volatile_labels,
    )
    ref = onset.reference(bsig.matrix, rel_floor=cfg.rel_floor, abs_floor=cfg.abs_floor)
    ref = onset.widen_to_band(ref, bsig.matrix, q=cfg.band_q, off=cfg.off_z)
    lower = ref.lower
    assert lower is not None  # widen_to_band always sets the lower spread
    stats = {
        bsig.key(i): (ref.median[i], ref.scale[i], ref.count[i], lower[i])
        for i in range(len(bsig.names))
    }
    return stats, bsig.references()


def apply(ref: onset.Reference, keys: list[tuple], stats: dict, cfg: Config) -> np.ndarray:
    """Replace, in place, each row's reference by its baseline's where that has enough points.

    Returns which rows now rest on the baseline.
    """
    ref.lower = ref.scale.copy()
    used = np.zeros(len(keys), dtype=bool)
    for i, key in enumerate(keys):
        got = stats.get(key)
        if got and got[2] >= cfg.min_reference_points:
            ref.median[i], ref.scale[i], ref.count[i], ref.lower[i] = got
            used[i] = True
    return used
