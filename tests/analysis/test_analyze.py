import json

import numpy as np
import pytest

from causeline.cli import main
from correlator.analysis import AnalysisError, Config, SlaMatchError, analyze
from correlator.analysis.render import render_text
from correlator.bundle import Bundle, Series, read_bundle, write_bundle
from tests.analysis.conftest import PUBLIC

SUSPECT_KEYS = {"rank", "kind", "score", "onset", "lead_seconds", "owner", "evidence"}


def _hits(suspect, cause):
    if cause["kind"] == "change":
        return suspect["kind"] == "change" and suspect["id"] == cause["id"]
    if suspect["kind"] != "series":
        return False
    base = suspect["metric"].removesuffix("_bucket").removesuffix("_sum").removesuffix("_count")
    if "metric" in cause and base != cause["metric"].removesuffix("_bucket"):
        return False
    return all(suspect["labels"].get(k) == v for k, v in cause.get("labels", {}).items())


def test_small_bundle_ranks_the_saturated_disk_first(bundle):
    out = analyze(bundle)
    assert out["sla"] == "m p99"
    assert out["breach_start"] is not None
    top = out["suspects"][0]
    assert set(top) >= SUSPECT_KEYS
    assert (top["metric"], top["labels"]) == ("node_disk_io_utilization_percent", {"host": "h1"})
    assert top["owner"] == "infra" and top["lead_seconds"] > 0
    assert top["lead_seconds"] == out["breach_start"] - top["onset"]
    assert all(0 <= s["score"] <= 1 for s in out["suspects"])
    assert [s["rank"] for s in out["suspects"]] == list(range(1, len(out["suspects"]) + 1))
    ranked = [(s.get("metric"), s.get("labels")) for s in out["suspects"]]
    assert ("node_disk_io_utilization_percent", {"host": "h2"}) not in ranked[:2]


def test_an_sla_of_one_series_says_its_scope_cannot_be_told(bundle):
    out = analyze(bundle)  # one SLA series: model_latency_p99_ms{model=m, instance=i1}
    assert out["scope"] == {
        "kind": "single",
        "labels": {"instance": "i1"},
        "series": 1,
        "affected": 1,
    }
    text = render_text(out)
    assert "Scope: the SLA has one series (instance=i1), so local or global cannot be told" in text
    assert "?" not in text.splitlines()[2]


@pytest.mark.parametrize(
    ("scope", "line"),
    [
        ({"kind": "global", "series": 8, "affected": 0}, "global (no one of the SLA's 8 series"),
        ({"kind": "global", "series": 4, "affected": 2}, "global (2 of 4 series)"),
        ({"kind": "local", "labels": {"host": "h1"}, "series": 4}, "local (host=h1)"),
    ],
)
def test_the_scope_line_says_how_many_series_moved(scope, line):
    out = {"sla": "s", "breach_start": 1_700_000_000.0, "scope": scope, "suspects": []}
    assert f"Scope: {line}" in render_text(out)


def test_given_breach_start_and_no_baseline(bundle):
    sla = {
        "name": "m p99",
        "metric": "model_latency_p99_ms",
        "labels": {"model": "m"},
        "breach_start": float(bundle.series[0].ts[88]),
    }
    out = analyze(Bundle(bundle.series, [], bundle.topology, sla, baseline=None))
    assert out["breach_given"] is True
    assert out["suspects"][0]["labels"] == {"host": "h1"}


def test_never_breached_gives_no_suspects(bundle):
    calm = dict(bundle.sla, threshold=1e9)
    out = analyze(Bundle(bundle.series, bundle.changes, bundle.topology, calm))
    assert out["breach_start"] is None and out["suspects"] == []
    assert "none found" in render_text(out)


def test_sla_matching_no_series_is_a_clear_error(bundle):
    sla = dict(bundle.sla, labels={"model": "nope"})
    with pytest.raises(SlaMatchError, match="model_latency_p99_ms"):
        analyze(Bundle(bundle.series, [], bundle.topology, sla))
    with pytest.raises(AnalysisError):
        analyze(Bundle([], [], bundle.topology, bundle.sla))


def test_config_top_limits_suspects(bundle):
    assert len(analyze(bundle, config=Config(top=2))["suspects"]) <= 2


def test_at_picks_the_given_time_without_a_breach_before(bundle):
    at = float(bundle.series[0].ts[5])
    out = analyze(bundle, at=at)
    assert out["breach_start"] == int(at) and out["breach_given"]


def test_at_the_breach_start_the_output_gave_finds_that_breach_again(bundle):
    # Samples 0.4 s past whole seconds: the output's breach start, in whole seconds, lies
    # just before the breach's bin, and read back as ``at`` it must find the same breach.
    late = [Series(s.name, s.labels, s.ts + 0.4, s.values) for s in bundle.series]
    first = analyze(Bundle(late, bundle.changes, bundle.topology, bundle.sla))
    again = analyze(
        Bundle(late, bundle.changes, bundle.topology, bundle.sla), at=first["breach_start"]
    )
    assert first["breach_start"] % 1 == 0 and not again["breach_given"]
    assert again["breach_start"] == first["breach_start"]
    assert again["suspects"] == first["suspects"]


@pytest.mark.skipif(not PUBLIC, reason="shared scenarios not present")
@pytest.mark.parametrize("case", PUBLIC, ids=lambda p: p.name)
def test_public_case_truth_in_top3_and_breach_within_one_step(case):
    truth = json.loads((case / "truth.json").read_text())
    out = analyze(read_bundle(case))
    top3 = out["suspects"][:3]
    assert any(_hits(s, c) for s in top3 for c in truth["root_causes"]), top3
    assert abs(out["breach_start"] - truth["breach_start"]) <= out["grid_step"]
    assert out["suspects"][0]["owner"] in ("algo", "infra")


def test_cli_json_and_text(tmp_path, capsys, bundle):
    folder = write_bundle(tmp_path / "b", bundle)
    assert main(["analyze", str(folder)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["suspects"][0]["labels"] == {"host": "h1"}
    assert main(["analyze", str(folder), "--format", "text", "--top", "3"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("SLA: m p99") and "node_disk_io_utilization_percent" in text


def test_cli_bad_bundles_give_clear_errors(tmp_path, capsys, bundle):
    assert main(["analyze", str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err
    folder = write_bundle(tmp_path / "b", bundle)
    (folder / "sla.json").write_text("{broken")
    assert main(["analyze", str(folder)]) == 2
    assert "sla.json" in capsys.readouterr().err
    (folder / "sla.json").write_text(json.dumps(dict(bundle.sla, metric="nothing_here")))
    assert main(["analyze", str(folder)]) == 2
    assert "no series matches metric 'nothing_here'" in capsys.readouterr().err


def test_label_change_keeps_one_series(bundle):
    s = bundle.series[0]
    half = s.ts.size // 2
    from correlator.bundle import Series

    a = Series(s.name, {**s.labels, "version": "1"}, s.ts[:half], s.values[:half])
    b = Series(s.name, {**s.labels, "version": "2"}, s.ts[half:], s.values[half:])
    out = analyze(Bundle([a, b, *bundle.series[1:]], [], bundle.topology, bundle.sla))
    assert out["breach_start"] == analyze(bundle)["breach_start"]
    assert np.isfinite(out["suspects"][0]["score"])


def test_the_typed_result_is_the_output_and_names_its_stages_figures(bundle):
    from correlator.analysis import AnalysisResult, run_analysis

    result = run_analysis(bundle)
    assert isinstance(result, AnalysisResult) and result.scored is not None
    out = result.to_dict()
    assert set(out.pop("timings")) == {"timeline_s", "ranking_s"}
    again = analyze(bundle)
    again.pop("timings")
    assert out == again
    top = out["suspects"][0]
    row = result.scored.signals.names.index(top["metric"])
    assert result.scored.score[row] > 0 and result.scored.who.shape == result.scored.score.shape
