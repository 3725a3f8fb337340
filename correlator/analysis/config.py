"""Tunable settings of the analysis, with the reasoning behind each default."""

from __future__ import annotations

from dataclasses import dataclass

from correlator.analysis.drift_signal import DRIFT
from correlator.analysis.kinds import RATE, VALUE, SignalKind
from correlator.analysis.timeline import VOLATILE_LABELS


@dataclass(frozen=True, slots=True)
class Config:
    """Settings of ``analyze``; every duration is in seconds."""

    # Reference ("normal") window: everything before the breach except this guard, so
    # an anomaly that started up to this long before the breach is not its own reference.
    reference_gap_s: float = 1800.0
    min_reference_points: int = 10
    # How far back from the breach an onset may lie.
    search_s: float = 3600.0
    # An anomaly must be out of its normal range within [breach - active_pre_s, breach + post_s].
    active_pre_s: float = 60.0
    post_s: float = 120.0
    # |robust z| above which a point is out of its normal range.
    off_z: float = 2.5
    full_z: float = 100.0
    # Spread floors: a flat series still gets a spread of rel_floor x its level / sqrt(points
    # in its reference): a long flat reference says more surely that small moves are rare
    # (0.02 of the level at 16 points, 0.005 at 256).
    rel_floor: float = 0.08
    # With a separate baseline, its band [100 - band_q, band_q] percentiles is still normal.
    band_q: float = 99.0
    abs_floor: float = 1e-9
    # A ramp (flat, then a steady climb to the breach) explaining this share of a series'
    # variance, begun inside the reference, moves the reference before it; rows tried.
    ramp_gain: float = 0.6
    ramp_rows: int = 300
    # Onsets after the breach weigh this: symptoms follow causes.
    late_weight: float = 0.5
    # Share of the base score that persistence (points out of range since onset) sets:
    # a one-point blip keeps 1 - persistence of it.
    persistence: float = 0.5
    # Topology: weight of a series on a known node outside the SLA's upstream.
    out_of_scope: float = 0.2
    # Traffic of a called node is set by its callers: weight of such a series.
    callee_traffic: float = 0.3
    # What a caller waits for (client-side latency, CLIENT spans) is set by what it calls:
    # weight of such a series.
    client_side: float = 0.5
    # A latency whose rise (in seconds) is this share of the SLA latency's rise or more can
    # carry the breach; below it, its weight falls with the share, to ``latency_least``.
    latency_share: float = 1 / 3
    latency_least: float = 0.3
    # A node whose anomalies explain those of several of its callers gains ``support`` per
    # extra caller.
    support: float = 0.25
    # Callers counted at most: past a few, more callers say little more about the node.
    support_most: int = 3
    # A deeper anomaly explains one above it only at this share of its severity or more;
    # a caller's call gaps to several callees rose alike when each is at this share of the
    # largest rise (``callgap.caller_side``).
    explains_ratio: float = 0.5
    # Rows (best base score first) tried as each other's explanations: bounds the pair search.
    explain_candidates: int = 300
    # A resource metric with its onset at one moment on this many nodes or more is one wave.
    wave_nodes: int = 3
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
    # Change events: the window in which an anomaly confirms one, and the share of its score
    # a change keeps with no anomaly confirming it. Its closeness decays over ``search_s``.
    confirm_s: float = 600.0
    change_unconfirmed: float = 0.3
    # Exponent of each factor of the score (``scoring.py``: severity, timing, ...) by name;
    # a factor not named keeps exponent 1.
    exponents: tuple[tuple[str, float], ...] = ()
    # Histogram drift: windows summed per distribution.
    drift_window_s: float = 60.0
    volatile_labels: tuple[str, ...] = VOLATILE_LABELS
    # The kinds of ranked signal (analysis/kinds.py); a kind is code, not a tuned constant.
    kinds: tuple[SignalKind, ...] = (VALUE, RATE, DRIFT)
    top: int = 20
