"""Figure builders and the pure helpers behind them."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.client import FetchedSeries
from dashboard.downsample import minmax, minmax_grid
from dashboard.figures.board import PanelData, board_figure
from dashboard.figures.calendar import calendar_figure
from dashboard.figures.clock import wall, walls
from dashboard.figures.histogram import drift_series, psi
from dashboard.figures.incident import incident_figure
from dashboard.figures.sla import breach_intervals
from dashboard.panels import PANELS, model_scope, panel_selectors, selector

T0 = 1_700_000_000.0


def _series(name, labels, values, step=15.0):
    values = np.asarray(values, dtype=float)
    return FetchedSeries(name, labels, T0 + step * np.arange(values.size), values)


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


def test_board_panels_share_one_labelled_time_range_and_hover_per_panel():
    fig = _board().to_dict()
    layout = fig["layout"]
    yaxes = sorted(k for k in layout if k.startswith("yaxis"))
    xaxes = sorted(k for k in layout if k.startswith("xaxis"))
    assert len(yaxes) == len(xaxes) == len(PANELS)
    for y in yaxes:  # each panel on its own time axis, which shows its times
        x = layout[y]["anchor"].replace("x", "xaxis")
        assert layout[x]["showticklabels"] is True
        assert layout[x]["range"] == ["2023-11-14 22:13:20.000", "2023-11-14 23:13:20.000"]
    assert all(layout[k]["matches"] == "x" for k in xaxes if k != "xaxis")  # zoom one, zoom all
    assert "matches" not in layout["xaxis"]
    assert layout["hovermode"] == "x unified"  # one box per panel, under one vertical line
    assert "hoversubplots" not in layout
    assert {(t["xaxis"], t["yaxis"]) for t in fig["data"]} == {
        (f"x{i}" if i > 1 else "x", f"y{i}" if i > 1 else "y") for i in range(1, len(PANELS) + 1)
    }


def _instances(n, panel=None, names=("lat",)):
    panel = panel or PANELS[0]
    series = [
        _series(name, {"model": "m", "instance": f"i-{k}"}, [1, 2, 3])
        for k in range(n)
        for name in names
    ]
    return PanelData(panel, series)


def test_each_panel_has_its_own_legend_with_distinct_colours():
    twelve = _instances(12, PANELS[2])
    fig = board_figure(
        [_instances(4), _instances(3, PANELS[1], ("p50", "p95", "p99")), twelve],
        window=(T0, T0 + 60),
    ).to_dict()
    by_axis: dict = {}
    for t in fig["data"]:
        by_axis.setdefault(t["yaxis"], []).append(t)
    first, latency, crowded = by_axis["y"], by_axis["y2"], by_axis["y3"]
    assert {t["legend"] for t in first} == {"legend"} and {t["legend"] for t in latency} == {
        "legend2"
    }
    assert "legend" in fig["layout"] and "legend2" in fig["layout"]
    # one entry per instance, whatever its variants; within a panel no colour twice
    assert [t["name"] for t in latency if t["showlegend"]] == ["i-0", "i-1", "i-2"]
    assert len({t["line"]["color"] for t in first}) == 4
    entity = {t["legendgroup"]: t["line"]["color"] for t in latency}
    assert len(set(entity.values())) == 3
    # the same instance keeps its colour from panel to panel
    colour = {t["name"]: t["line"]["color"] for t in first}
    assert {t["name"]: t["line"]["color"] for t in latency if t["showlegend"]} == {
        k: colour[k] for k in ("i-0", "i-1", "i-2")
    }
    # twelve series: no legend to crowd the panel, names on hover, ten colours before repeats
    assert not any(t["showlegend"] for t in crowded) and "legend3" not in fig["layout"]
    assert len({t["line"]["color"] for t in crowded}) == 10
    assert all("i-" in t["hovertemplate"] for t in crowded)


def test_board_reads_in_a_local_zone_by_moving_every_time():
    change = {"id": "c1", "ts": T0 + 600, "owner": "algo"}
    panel = _instances(1)
    utc = board_figure([panel], window=(T0, T0 + 60), changes=[change]).to_dict()
    local = board_figure(
        [panel], window=(T0, T0 + 60), changes=[change], breaches=[(T0, T0 + 30)], offset=3600
    ).to_dict()
    # times go as zone-free strings: Plotly would move numbers into the browser's zone
    assert utc["layout"]["xaxis"]["range"][0] == utc["data"][0]["x0"] == "2023-11-14 22:13:20.000"
    assert (
        local["layout"]["xaxis"]["range"][0] == local["data"][0]["x0"] == "2023-11-14 23:13:20.000"
    )
    shapes = {s["name"]: s for s in local["layout"]["shapes"]}
    assert shapes["change:c1"]["x0"] == "2023-11-14 23:23:20.000"
    assert shapes["breach"]["x0"] == "2023-11-14 23:13:20.000"
    assert change["ts"] == T0 + 600  # the caller's change is left as it was


def test_times_are_written_as_plotly_draws_them_whatever_the_browsers_zone():
    assert wall(T0) == "2023-11-14 22:13:20.000"
    assert walls([T0, T0 + 0.25], offset=8 * 3600) == [
        "2023-11-15 06:13:20.000",
        "2023-11-15 06:13:20.250",
    ]


def test_board_marks_changes_breaches_and_thresholds():
    change = {"id": "c1", "ts": T0 + 600, "kind": "deploy", "owner": "algo", "summary": "v2"}
    fig = _board([change], [(T0 + 900, T0 + 1800)], {"latency": [(50.0, "SLA > 50")]}).to_dict()
    names = [s.get("name") for s in fig["layout"]["shapes"]]
    assert names.count("change:c1") == 1 and names.count("breach") == 1
    assert names.count("threshold") == 1
    markers = [t for t in fig["data"] if t["name"] == "change"]
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
    onset = next(s for s in fig["layout"]["shapes"] if s.get("name") == "onset")
    assert onset["label"]["textposition"] == "start"  # at the foot: the row's title is on top
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
    assert marker["x0"] == marker["x1"] == wall(T0 + 20)
    assert marker["yref"] == "paper" and "#1 change chg-17" in marker["label"]["text"]


def test_calendar_shows_planned_hollow_and_done_filled():
    changes = [
        {"id": "a", "ts": T0, "kind": "deploy", "target": "model:m"},
        {"id": "b", "ts": None, "planned_ts": T0 + 60, "kind": "deploy", "target": "model:m"},
    ]
    fig = calendar_figure(changes, window=(T0 - 60, T0 + 120), now=T0 + 30).to_dict()
    (trace,) = fig["data"]
    assert trace["marker"]["symbol"] == ["circle", "circle-open"]


def test_calendar_puts_changes_close_in_time_on_their_own_lanes():
    # The demo's four changes: three on the model within 30 min, seen in a 9-day window.
    changes = [
        {"id": "demo-chg-1", "ts": T0 - 4 * 3600, "kind": "image", "target": "model:m"},
        {"id": "demo-chg-2", "ts": T0 - 95 * 60, "kind": "infra", "target": "host:h"},
        {"id": "demo-chg-3", "ts": T0 - 7 * 60, "kind": "feature", "target": "model:m"},
        {"id": "demo-chg-4", "ts": T0 + 22 * 60, "kind": "capacity", "target": "model:m"},
    ]
    window = (T0 - 7 * 86400, T0 + 2 * 86400)
    fig = calendar_figure(changes, window=window, now=T0).to_dict()
    rows = {t["text"][0]: t["y"][0] for t in fig["data"]}
    model_rows = [rows[f"demo-chg-{i}"] for i in (1, 3, 4)]
    assert len(set(model_rows)) == 3  # none drawn over another
    assert rows["demo-chg-2"] not in model_rows
    axis = fig["layout"]["yaxis"]
    assert list(axis["ticktext"]) == ["host:h", "model:m"]  # one tick per target, not per lane
    assert fig["layout"]["height"] >= 140 + 26 * 4
    apart = [{**c, "ts": T0 - i * 86400} for i, c in enumerate(changes)]
    spread = calendar_figure(apart, window=window, now=T0).to_dict()
    assert {t["y"][0] for t in spread["data"] if t["text"][0] != "demo-chg-2"} == {1.0}


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
    assert trace.x is None and trace.x0 == wall(T0) and trace.dx == 15000


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


def test_incident_figure_spans_the_points_not_the_empty_rest_of_its_window():
    from dashboard.figures.clock import walls
    from dashboard.figures.incident import shown_range

    sla = {"name": "p99", "metric": "lat", "threshold": 50}
    window = (T0 - 3600, T0 + 2700)  # an open incident's: an hour before, 45 min after
    rows = [_series("lat", {}, [1, 2, 3, 4])]  # T0 .. T0 + 45 s
    fig = incident_figure(
        sla=sla, sla_series=rows, suspects=[], breach=(T0 + 30, T0 + 45), window=window
    ).to_dict()
    assert fig["layout"]["xaxis"]["range"] == walls((T0 - 60, T0 + 105))
    assert shown_range(window, [[]], [T0]) == window  # nothing drawn: the whole window
    assert shown_range(window, [rows], [T0 + 2000]) == (T0 - 60, T0 + 2060)  # breach in view
    onset = T0 - 600  # a suspect's onset before its first point stays in view
    assert shown_range(window, [rows], [T0 + 30, onset]) == (T0 - 660, T0 + 105)
    wide = [_series("lat", {}, np.zeros(1000), step=60.0)]  # past the window's end
    assert shown_range(window, [wide], [T0]) == pytest.approx((T0 - 0.02 * 59_940, T0 + 2700))


def test_one_entity_drawn_as_several_statistics_has_a_legend_of_them():
    """PetShop's SLA panel: avg, p50, p90, p95 and p99 of one service, each named and dashed."""
    names = ("latency_avg", "latency_p50", "latency_p90", "latency_p95", "latency_p99")
    fig = board_figure([_instances(1, PANELS[1], names)], window=(T0, T0 + 60)).to_dict()
    lines = [t for t in fig["data"] if t["name"] != "change"]
    assert [t["name"] for t in lines if t["showlegend"]] == ["avg", "p50", "p90", "p95", "p99"]
    assert len({t["line"]["dash"] for t in lines}) == 5 and "legend" in fig["layout"]


def test_a_series_of_one_or_two_points_is_drawn_with_markers():
    """A line needs two points: a suspect with one sample must not be an empty panel."""
    one = PanelData(PANELS[0], [_series("lat", {"instance": "i-0"}, [5.0])])
    fig = board_figure([one], window=(T0, T0 + 60)).to_dict()
    assert [t["mode"] for t in fig["data"] if t["name"] != "change"] == ["lines+markers"]
    many = board_figure([_instances(1)], window=(T0, T0 + 60)).to_dict()
    assert [t["mode"] for t in many["data"] if t["name"] != "change"] == ["lines"]
