"""Figure builders and the pure helpers behind them."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.client import Series
from dashboard.downsample import minmax, minmax_grid
from dashboard.figures.board import PanelData, board_figure
from dashboard.figures.calendar import calendar_figure
from dashboard.figures.histogram import drift_series, psi
from dashboard.figures.incident import incident_figure
from dashboard.figures.sla import breach_intervals
from dashboard.panels import PANELS, model_scope, panel_selectors, selector

T0 = 1_700_000_000.0


def _series(name, labels, values, step=15.0):
    values = np.asarray(values, dtype=float)
    return Series(name, labels, T0 + step * np.arange(values.size), values)


def test_minmax_keeps_extremes_and_order():
    rng = np.random.default_rng(1)
    values = rng.normal(size=10_000)
    values[1234], values[8765] = 50.0, -50.0
    ts = np.arange(values.size, dtype=float)
    out_ts, out_values = minmax(ts, values, 500)
    assert out_ts.size <= 500
    assert np.all(np.diff(out_ts) > 0)
    assert 50.0 in out_values and -50.0 in out_values


def test_minmax_drops_nan_and_leaves_short_series_alone():
    ts, values = np.arange(5.0), np.array([1, np.nan, 3, 4, 5.0])
    out_ts, out_values = minmax(ts, values, 100)
    assert out_ts.tolist() == [0, 2, 3, 4] and out_values.tolist() == [1, 3, 4, 5]


def _histogram(shift_at: int, n=400):
    bounds = ["1", "2", "4", "+Inf"]
    before, after = np.array([0.7, 0.2, 0.1, 0]), np.array([0.1, 0.2, 0.7, 0])
    mix = np.where(np.arange(n)[:, None] < shift_at, before, after) * 100
    cumulative = np.cumsum(np.cumsum(mix, axis=1), axis=0)
    return [
        _series("x_bucket", {"model": "m", "le": le}, cumulative[:, i])
        for i, le in enumerate(bounds)
    ]


def test_drift_series_is_flat_then_jumps_after_the_shift():
    (out,) = drift_series(_histogram(shift_at=300), windows=40)
    assert out.name == "x_psi" and out.labels == {"model": "m"}
    assert np.nanmax(out.values[:25]) < 0.01
    assert np.nanmin(out.values[-5:]) > 1.0


def test_psi_is_zero_for_the_same_distribution():
    counts = np.array([[10.0, 20.0, 30.0]])
    assert psi(counts, counts[0]) == pytest.approx([0.0], abs=1e-9)


def test_breach_needs_for_seconds_on_the_wrong_side():
    sla = {
        "metric": "lat",
        "labels": {"model": "m"},
        "aggregate": "max",
        "op": ">",
        "threshold": 50,
        "for_seconds": 60,
    }
    values = [10] * 10 + [100] * 3 + [10] * 5 + [100] * 10 + [10] * 5
    found = breach_intervals(sla, [_series("lat", {"model": "m", "instance": "a"}, values)])
    assert found == [(T0 + 18 * 15 + 60, T0 + 27 * 15)]
    assert breach_intervals(sla, [_series("lat", {"model": "other"}, values)]) == []


def _board(changes=(), breaches=(), thresholds=None):
    panels = [
        PanelData(p, [_series(p.metrics[0], {"model": "m", "instance": "i-1"}, [1, 2, 3])])
        for p in PANELS
    ]
    return board_figure(
        panels,
        window=(T0, T0 + 3600),
        changes=list(changes),
        breaches=list(breaches),
        thresholds=thresholds,
    )


def test_board_puts_every_panel_on_one_time_axis():
    fig = _board().to_dict()
    layout = fig["layout"]
    yaxes = [k for k in layout if k.startswith("yaxis")]
    assert len(yaxes) == len(PANELS)
    assert all(layout[k]["anchor"] == "x" for k in yaxes)
    assert not [k for k in layout if k.startswith("xaxis") and k != "xaxis"]
    assert {t.get("xaxis", "x") for t in fig["data"]} == {"x"}
    assert layout["xaxis"]["range"] == [T0 * 1000, (T0 + 3600) * 1000]
    assert layout["hovermode"] == "x" and layout["xaxis"]["spikemode"] == "across"


def test_board_marks_changes_breaches_and_thresholds():
    change = {"id": "c1", "ts": T0 + 600, "kind": "deploy", "owner": "algo", "summary": "v2"}
    fig = _board([change], [(T0 + 900, T0 + 1800)], {"latency": [(50.0, "SLA > 50")]}).to_dict()
    names = [s.get("name") for s in fig["layout"]["shapes"]]
    assert names.count("change:c1") == 1 and names.count("breach") == 1
    assert names.count("threshold") == 1
    markers = [t for t in fig["data"] if t["name"] == "changes"]
    assert len(markers) == len(PANELS)
    assert "v2" in markers[0]["hovertext"][0]


def test_incident_figure_marks_onset_and_breach():
    sla = {"name": "p99", "metric": "lat", "threshold": 50}
    suspect = {"rank": 1, "kind": "series", "metric": "q", "labels": {}, "onset": T0 + 30}
    fig = incident_figure(
        sla=sla,
        sla_series=[_series("lat", {}, [1, 2])],
        suspects=[(suspect, [_series("q", {}, [3, 4])])],
        breach=(T0 + 15, T0 + 30),
        window=(T0, T0 + 60),
    ).to_dict()
    names = [s.get("name") for s in fig["layout"]["shapes"]]
    assert {"onset", "breach", "threshold"} <= set(names)
    assert {t["yaxis"] for t in fig["data"]} == {"y", "y2"}


def test_incident_figure_draws_a_suspect_change_across_the_rows():
    sla = {"name": "p99", "metric": "lat", "threshold": 50}
    change = {"rank": 1, "kind": "change", "id": "chg-17", "onset": T0 + 20}
    fig = incident_figure(
        sla=sla,
        sla_series=[_series("lat", {}, [1, 2])],
        suspects=[],
        breach=(T0 + 15, T0 + 30),
        window=(T0, T0 + 60),
        changes=[change],
    ).to_dict()
    (marker,) = [s for s in fig["layout"]["shapes"] if s.get("name") == "change"]
    assert marker["x0"] == marker["x1"] == (T0 + 20) * 1000.0
    assert marker["yref"] == "paper" and "#1 change chg-17" in marker["label"]["text"]


def test_calendar_shows_planned_hollow_and_done_filled():
    changes = [
        {"id": "a", "ts": T0, "kind": "deploy", "target": "model:m"},
        {"id": "b", "ts": None, "planned_ts": T0 + 60, "kind": "deploy", "target": "model:m"},
    ]
    fig = calendar_figure(changes, window=(T0 - 60, T0 + 120), now=T0 + 30).to_dict()
    (trace,) = fig["data"]
    assert trace["marker"]["symbol"] == ["circle", "circle-open"]


def test_selectors_follow_the_topology():
    topology = {
        "edges": [
            {"from": "instance:i-1", "to": "model:m", "kind": "serves"},
            {"from": "instance:i-1", "to": "host:h1", "kind": "runs_on"},
            {"from": "instance:i-9", "to": "model:other", "kind": "serves"},
        ]
    }
    assert model_scope(topology, "m") == (["i-1"], ["h1"])
    gpu = next(p for p in PANELS if p.key == "gpu_util")
    assert panel_selectors(gpu, model="m", instances=["i-1"], hosts=["h1", "h2"], gpus=[]) == [
        'gpu_utilization_percent{host=~"h1|h2"}'
    ]
    assert selector("x", {"model": ['a"b']}) == 'x{model="a\\"b"}'


def test_minmax_grid_shares_one_grid_and_keeps_spikes_in_time_order():
    ts = np.arange(0, 1000, 1.0)
    values = np.zeros_like(ts)
    values[60], values[40] = 9.0, -9.0
    grid, out = minmax_grid(ts, values, 0.0, 2000.0, 40)
    assert grid.size == out.size == 40
    assert np.allclose(np.diff(grid), 50.0)
    assert out[0] == -9.0 and out[1] == 9.0  # bin 0: the min (t=40) comes before the max (t=60)
    assert np.isnan(out[-1])  # no data after t=1000


def test_uniform_series_are_sent_without_x_values():
    panel = PanelData(
        PANELS[0], [_series("model_requests_per_second", {"instance": "i"}, [1, 2, 3])]
    )
    (trace, *_rest) = board_figure([panel], window=(T0, T0 + 60)).data
    assert trace.x is None and trace.x0 == T0 * 1000 and trace.dx == 15000


@pytest.mark.parametrize("rows", range(1, 12))
def test_incident_rows_stay_inside_the_figure(rows):
    suspect = {"rank": 1, "kind": "series", "metric": "q", "labels": {}, "onset": None}
    fig = incident_figure(
        sla={"name": "p99", "metric": "lat"},
        sla_series=[],
        suspects=[(suspect, [])] * (rows - 1),
        breach=(T0, T0 + 1),
        window=(T0, T0 + 2),
    )
    domains = [v["domain"] for k, v in fig.to_dict()["layout"].items() if k.startswith("yaxis")]
    assert len(domains) == rows and all(0 <= a < b <= 1 for a, b in domains)


def test_board_is_legible_thresholds_off_the_data_suspects_marked_drift_flat():
    suspect = {"id": "c1", "ts": T0 + 600, "kind": "deploy", "owner": "algo", "suspect_rank": 1}
    other = {"id": "c2", "ts": T0 + 900, "kind": "config", "owner": "infra"}
    fig = _board([suspect, other], thresholds={"latency": [(50.0, "SLA > 50")]}).to_dict()
    shapes = {s.get("name"): s for s in fig["layout"]["shapes"]}
    assert "label" not in shapes["threshold"]  # the threshold is named in the panel title
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert sum("SLA &gt; 50" in t or "SLA > 50" in t for t in titles) == 1
    assert shapes["change:c1"]["line"]["width"] > shapes["change:c2"]["line"]["width"]
    assert shapes["change:c1"]["label"]["text"] == "#1 suspect: c1"
    assert "label" not in shapes["change:c2"]
    drift = [i for i, p in enumerate(PANELS) if p.unit == "PSI"]
    assert drift, "a drift panel exists"
    axis = "yaxis" if drift[0] == 0 else f"yaxis{drift[0] + 1}"
    assert fig["layout"][axis]["range"][1] >= 0.3  # tiny PSI noise stays flat


def test_status_counts_read_as_words():
    from dashboard.pages.board import counted

    assert counted(1, "SLA breach", "SLA breaches") == "1 SLA breach"
    assert counted(2, "SLA breach", "SLA breaches") == "2 SLA breaches"
    assert counted(1200, "point") == "1,200 points" and counted(1, "change") == "1 change"


def test_board_marks_the_incidents_suspect_changes():
    from dashboard.board_data import mark_suspects

    incident = {
        "suspects": [{"kind": "series", "metric": "q"}, {"kind": "change", "id": "c2", "rank": 2}]
    }
    out = mark_suspects([{"id": "c1"}, {"id": "c2"}], incident)
    assert out == [{"id": "c1"}, {"id": "c2", "suspect_rank": 2}]
    assert mark_suspects([{"id": "c1"}], None) == [{"id": "c1"}]
    late = {"suspects": [{"kind": "series"}] * 5 + [{"kind": "change", "id": "c1", "rank": 6}]}
    assert mark_suspects([{"id": "c1"}], late) == [{"id": "c1"}]  # the top 5 only
