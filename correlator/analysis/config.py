"""Tunable settings of the analysis, with the reasoning behind each default."""

from __future__ import annotations

from dataclasses import dataclass

from correlator.analysis.timeline import VOLATILE_LABELS


@dataclass(frozen=True, slots=True)
class Config:
    """Settings of ``analyze``; every duration is in seconds."""

    # Reference ("normal") window: everything before the breach except this guard, so
    # an anomaly that started up to this long before the breach is not its own reference.
    reference_gap_s: float = 1800.0
    min_reference_points: int = 10
    # Reference columns where the SLA itself was out of range (an earlier incident) are left
    # out: a fault's marks there are not normal operation. So is this long on either side,
    # where those marks begin before the SLA shows them and fade after it recovers.
    calm_margin_s: float = 60.0
    # How far back from the breach an onset may lie.
    search_s: float = 3600.0
    # An anomaly must be out of its normal range within [breach - active_pre_s, breach + post_s].
    active_pre_s: float = 60.0
    post_s: float = 120.0
    # |robust z| above which a point is out of its normal range; smoothing width in points.
    off_z: float = 2.5
    full_z: float = 100.0
    # A utilisation in percent that reaches this from a normal level below it is a
    # saturated resource: full severity, whatever its spread.
    saturation_percent: float = 95.0
    smooth_width: int = 3
    # The smoothing spans about this long at most, so a coarse grid keeps its single points.
    smooth_s: float = 45.0
    # Spread floors: a flat series still gets a spread of rel_floor x its level.
    rel_floor: float = 0.02
    # With a separate baseline, its band [100 - band_q, band_q] percentiles is still normal.
    band_q: float = 99.0
    # A long baseline shows its own noise, so its level-relative floor can be tighter.
    band_rel_floor: float = 0.005
    abs_floor: float = 1e-9
    # A series at level zero gets at least this share of its siblings' (same metric, other
    # labels) median spread, and its unit's smallest meaningful step (analysis/units.py).
    sibling_floor: float = 0.5
    # A ramp (flat, then a steady climb to the breach) explaining this share of a series'
    # variance, begun inside the reference, moves the reference before it; rows tried.
    ramp_gain: float = 0.6
    ramp_rows: int = 300
    # Onsets after the breach weigh this: symptoms follow causes.
    late_weight: float = 0.5
    # An anomaly at most of its size (``grown_share`` of its peak |z|) while the SLA then
    # stayed normal for longer than the grace (the larger of these seconds and grid steps)
    # did not break it, or not alone: its timing weight fades with this time scale past the
    # grace. A ramp counts from when it had grown, so a leak that hurts late keeps its weight.
    grown_share: float = 0.8
    quiet_grace_s: float = 600.0
    quiet_grace_steps: int = 2
    quiet_tau_s: float = 300.0
    # Share of the base score that persistence (points out of range since onset) sets:
    # a one-point blip keeps 1 - persistence of it.
    persistence: float = 0.5
    # A reference of fewer points is no real one: such a row weighs ``no_reference``.
    real_reference: int = 3
    no_reference: float = 0.5
    # Topology: weight of a series outside the SLA's upstream, or on no known node.
    out_of_scope: float = 0.2
    unknown_node: float = 0.5
    # Traffic of a called node is set by its callers: weight of such a series.
    callee_traffic: float = 0.3
    # A node whose anomaly several anomalous callers share gains ``support`` per extra caller
    # (callers count from severity ``caller_least`` on).
    support: float = 0.25
    caller_least: float = 0.1
    # Callers counted at most: past a few, more callers say little more about the node.
    support_most: int = 3
    # ... unless a node it depends on is anomalous at this share of its severity or more.
    explains_ratio: float = 0.5
    # Rows (best base score first) tried as each other's explanations: bounds the pair search.
    explain_candidates: int = 300
    # Only a row whose timing weight is above this (onset by the breach) explains another.
    explainer_timing: float = 0.5
    # Each further suspect on an already listed node is weighted by this once more,
    # so the top of the list covers several nodes instead of one node's many series.
    same_node: float = 0.7
    # Weight of an anomaly already present where the onset search starts (onset unseen).
    censored: float = 0.5
    # Weight of a difference from a separately recorded baseline already present where the
    # incident window starts and steady up to the breach: it did not start this incident (the
    # baseline may be from another day). The share of it that arose in the window adds back.
    standing: float = 0.2
    # Weight of a move the way that does not hurt (availability up, latency down): evidence,
    # never a cause by itself. ``harm`` overrides the way a metric hurts (name, +1 or -1).
    harmless: float = 0.1
    harm: tuple[tuple[str, int], ...] = ()
    # How much an anomaly that is explained by an earlier or deeper one loses.
    explained: float = 0.5
    # Change events: decay of closeness, and the window in which an anomaly confirms one.
    change_tau_s: float = 1800.0
    confirm_s: float = 600.0
    # Closeness of a change made more than a step after the breach: barely a suspect.
    change_after: float = 0.05
    # Share of a change's score it keeps with no anomaly confirming it.
    change_unconfirmed: float = 0.3
    # Changes scoring this or less are not listed.
    change_least: float = 0.005
    # Histogram drift: windows summed per distribution.
    drift_window_s: float = 60.0
    volatile_labels: tuple[str, ...] = VOLATILE_LABELS
    top: int = 20
