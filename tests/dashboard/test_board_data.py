"""What the board draws for a view, on a recorded service (no HTTP): any names, any input."""

from __future__ import annotations

import numpy as np
import pytest

from correlator.selector import SelectorError, parse_selector
from dashboard.board_data import BoardView, load_board
from dashboard.client import ApiError, FetchedSeries, Routes
from dashboard.panels import PANELS
from tests.helpers import p99_sla

T0 = 1_681_857_000.0
BREACH = T0 + 600


def _series(name, labels, values, step=60.0):
    values = np.asarray(values, dtype=float)
    return FetchedSeries(name, labels, T0 + step * np.arange(values.size), values)


class RecordedService(Routes):
    """The part of ApiClient the board uses, answering from series held in memory."""

    def __init__(self, series, slas, incidents=(), topology=None):
        self.stored = list(series)
        self._slas = list(slas)
        self._incidents = {i["id"]: i for i in incidents}
        self._topology = topology or {"nodes": [], "edges": []}
        self.queries: list[str] = []

    def _match(self, text):
        try:
            sel = parse_selector(text)
        except SelectorError as exc:
            raise ApiError(422, str(exc)) from exc
        return [s for s in self.stored if sel.matches(s.name, s.labels)]

    def topology(self):
        return self._topology

    def slas(self):
        return self._slas

    def changes(self, start=None, end=None, **_filters):
        return []

    def get(self, path, **_params):
        if path == "/api/v1/incidents":
            return [
                {k: v for k, v in i.items() if k != "suspects"} for i in self._incidents.values()
            ]
        return self._incidents[int(path.rsplit("/", 1)[1])]

    def series(self, match, limit=1000):
        return [{"name": s.name, "labels": s.labels} for s in self._match(match)][:limit]

    def label_values(self, name, match=None, limit=1000):
        found = self._match(match) if match else self.stored
        if name == "__name__":
            return sorted({s.name for s in found})[:limit]
        return sorted({s.labels[name] for s in found if name in s.labels})[:limit]

    def query_many(self, groups, start, end, step=None, *, failed=None):
        out = []
        for i, group in enumerate(groups):
            self.queries += group
            try:
                found = {id(s): s for m in group for s in self._match(m)}
            except ApiError as exc:
                failed[i] = exc
                out.append([])
                continue
            out.append(
                [
                    FetchedSeries(s.name, s.labels, s.ts[keep], s.values[keep])
                    for s in found.values()
                    for keep in [(s.ts >= start) & (s.ts <= end)]
                ]
            )
        return out


PETSHOP_SLA = {
    "name": "PetSite latency (Average) SLO",
    "metric": "latency_avg",
    "labels": {"service": "PetSite"},
    "aggregate": "max",
    "breach_start": BREACH,
}
INCIDENT = {
    "id": 7,
    "sla": PETSHOP_SLA["name"],
    "status": "open",
    "breach_start": BREACH,
    "suspects": [
        {"rank": 1, "kind": "change", "id": "chg-1"},
        {"rank": 2, "kind": "series", "metric": "latency_avg", "labels": {"service": "DynamoDB"}},
        {"rank": 3, "kind": "series", "metric": "latency_p99", "labels": {"service": "PetSite"}},
        {"rank": 4, "kind": "series", "metric": "pod_memory_bytes", "labels": {"service": "cart"}},
        {"rank": 5, "kind": "series", "metric": "restarts_total", "labels": {"service": "cart"}},
        {"rank": 6, "kind": "series", "metric": "gone_metric", "labels": {"service": "x"}},
    ],
}


def _petshop() -> RecordedService:
    return RecordedService(
        [
            _series("latency_avg", {"service": "PetSite"}, [0.1, 0.1, 0.2, 0.3, 0.5, 0.4]),
            _series("latency_p99", {"service": "PetSite"}, [1, 1, 2, 3, 5, 4]),
            _series("latency_avg", {"service": "DynamoDB"}, [0.01, 0.01, 0.2, 0.3, 0.3, 0.2]),
            _series("pod_memory_bytes", {"service": "cart", "pod": "c-1"}, [3 * 2**30] * 6),
            _series("restarts_total", {"service": "cart", "pod": "c-1"}, [0, 60, 120, 0, 60, 120]),
            _series("requests_sum", {"service": "PetSite"}, [10, 11, 12, 13, 14, 15]),
        ],
        [PETSHOP_SLA],
        [INCIDENT],
    )


def _view(**kw) -> BoardView:
    return BoardView(kw.pop("model", None), T0 - 60, T0 + 900, **kw)


def test_sla_and_suspects_of_unknown_names_are_drawn_and_empty_built_ins_hidden():
    data = load_board(_petshop(), _view())
    titles = [p.panel.title for p in data.panels]
    assert titles == [
        "PetSite latency (Average) SLO #3 · latency · service=PetSite",
        "#2 · latency · service=DynamoDB",
        "#4 · pod_memory_bytes · service=cart",
        "#5 · restarts_total · service=cart",
    ]
    sla_panel = data.panels[0]
    assert {s.name for s in sla_panel.series} == {"latency_avg", "latency_p99"}
    assert all(s.ts.size == 6 for s in sla_panel.series)
    listed = [p.title for p in PANELS if not p.optional]
    assert data.hidden[-len(listed) :] == listed
    # a panel only some servers fill (LLM token latencies) is left out without a note
    assert not {p.title for p in PANELS if p.optional} & set(data.hidden)
    assert any(p.optional for p in PANELS)
    assert "#6 · gone_metric · service=x" in data.hidden
    memory = data.panels[2]
    assert memory.label == "GiB" and np.allclose(memory.series[0].values, 3.0)
    restarts = data.panels[3]
    assert restarts.label == "/s" and np.allclose(restarts.series[0].values, [1, 1, 0, 1, 1])
    assert data.breaches == [(BREACH, T0 + 900)]  # declared by the SLA, to the window's end
    assert data.incident["id"] == 7 and data.notes == []


def test_a_chosen_service_adds_its_own_metrics_once():
    data = load_board(_petshop(), _view(services=["PetSite"]))
    titles = [p.panel.title for p in data.panels]
    assert titles[0].startswith("PetSite latency (Average) SLO")
    assert "requests_sum · service=PetSite" in titles
    drawn = [(s.name, tuple(s.labels.items())) for p in data.panels for s in p.series]
    assert len(drawn) == len(set(drawn))  # no series twice


@pytest.mark.parametrize("model", ["unknown", "PetSite", 'a"b\\', ".*", "(", "\u00e9"])
def test_an_unknown_model_says_there_is_no_data(model):
    service = _petshop()
    data = load_board(service, _view(model=model))
    assert f"no data for model={model} in this window" in data.notes
    assert all(parse_selector(q) for q in service.queries)  # every selector sent is valid


def test_unknown_filter_values_say_so():
    data = load_board(_petshop(), _view(services=["nope"], hosts=["h.1"], gpus=["9"]))
    assert data.panels == []
    assert data.notes == [
        "no data for service=nope in this window",
        "no data for host=h.1 in this window",
        "no data for gpu=9 in this window",
    ]


def test_own_panels_drawn_named_or_refused_with_a_reason():
    panels = [
        ("PetSite p99", 'latency_p99{service="PetSite"}'),
        ("", 'latency_avg{service=~"Pet.*"}'),
        ("bad regex", 'latency_avg{service=~"("}'),
        ("unreadable", "not a selector"),
        ("empty", 'latency_avg{service="nowhere"}'),
    ]
    data = load_board(_petshop(), _view(panels=panels))
    titles = [p.panel.title for p in data.panels]
    assert titles[1:3] == ["PetSite p99", 'latency_avg{service=~"Pet.*"}']
    assert data.panels[1].series[0].labels == {"service": "PetSite"}
    assert any(n.startswith('cannot draw latency_avg{service=~"("}') for n in data.notes)
    assert any(n.startswith("cannot draw not a selector") for n in data.notes)
    assert 'no data for latency_avg{service="nowhere"} in this window' in data.notes


def test_an_sla_on_a_built_in_metric_stays_in_its_built_in_panel():
    labels = {"model": "m", "instance": "i-1"}
    service = RecordedService(
        [_series("model_latency_p99_ms", labels, [10, 10, 60, 60, 60, 10])],
        [p99_sla("m", threshold=50, for_seconds=60)],
        topology={"edges": [{"from": "instance:i-1", "to": "model:m", "kind": "serves"}]},
    )
    data = load_board(service, _view(model="m"))
    assert [p.panel.key for p in data.panels] == ["latency"]
    assert data.thresholds == {"latency": [(50.0, "m p99: > 50")]}
    assert data.breaches == [(T0 + 180, T0 + 240)]


def test_the_step_asked_for_gives_the_points_drawn_in_whole_minutes():
    from dashboard.board_data import BoardView, _step

    def step(hours):
        return _step(BoardView("m", 0.0, hours * 3600.0), 600)

    # the service keeps each step's lowest and highest sample: two points per step
    assert step(24) == 300.0 and step(6) == 120.0 and step(7 * 24) == 2040.0
    assert step(1) == 15.0  # never finer than the usual scrape interval
    assert step(2) == 24.0  # under a minute: as computed, raw samples answer
