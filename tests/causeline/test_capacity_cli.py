"""``causeline capacity plan``: a figure it cannot plan with is one line naming the option."""

from __future__ import annotations

import pytest

from causeline.cli import main
from causeline.commands.capacity import FIGURES
from correlator.api.schemas.capacity import PlanIn

GOOD = {
    "--sla-ms": "30",
    "--latency-ms": "12",
    "--qps-per-replica": "40",
    "--peak-qps": "400",
    "--redundancy": "0.2",
}


def _argv(**changed: str) -> list[str]:
    figures = GOOD | {f"--{k.replace('_', '-')}": v for k, v in changed.items()}
    return ["capacity", "plan", *(f"{flag}={value}" for flag, value in figures.items())]


BAD = [
    ("qps_per_replica", "1e-300", "replicas"),
    ("qps_per_replica", "5e-324", "replicas"),
    ("qps_per_replica", "0", "above 0"),
    ("qps_per_replica", "-40", "above 0"),
    ("qps_per_replica", "inf", "at most"),
    ("qps_per_replica", "nan", "a number"),
    ("qps_per_replica", "1e308", "at most"),
    ("peak_qps", "1e308", "at most"),
    ("peak_qps", "inf", "at most"),
    ("peak_qps", "nan", "a number"),
    ("peak_qps", "-5", "above 0"),
    ("sla_ms", "nan", "a number"),
    ("sla_ms", "inf", "at most"),
    ("sla_ms", "0", "above 0"),
    ("latency_ms", "nan", "a number"),
    ("latency_ms", "-inf", "above 0"),
    ("latency_ms", "1e7", "at most"),
    ("redundancy", "-1", "0 or more"),
    ("redundancy", "nan", "a number"),
    ("redundancy", "inf", "at most"),
    ("redundancy", "1e300", "at most"),
]


@pytest.mark.parametrize(("option", "value", "words"), BAD, ids=[f"{o}={v}" for o, v, _ in BAD])
def test_a_figure_the_plan_cannot_use_is_one_line_naming_the_option(capsys, option, value, words):
    assert main(_argv(**{option: value})) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    flag = f"--{option.replace('_', '-')}"
    assert captured.err.startswith(f"causeline capacity: error: {flag}"), captured.err
    assert words in captured.err and captured.err.count("\n") == 1, captured.err


def test_a_gpu_name_holding_a_terminal_escape_is_refused_before_it_is_printed(capsys):
    assert main([*_argv(), "--gpu", "T4\x1b[31m"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "\x1b" not in captured.err
    assert captured.err.startswith("causeline capacity: error: argument --gpu: ")


def test_the_bounds_at_their_edges_still_plan(capsys):
    argv = _argv(qps_per_replica="1000", peak_qps="1e9", redundancy="10", sla_ms="1e6")
    assert main(argv) == 0
    assert "=> 1000000 replicas, 11000000 with redundancy" in capsys.readouterr().out


def test_the_options_hold_the_bounds_the_api_holds():
    fields = PlanIn.model_fields
    for _option, field, low, high, low_included in FIGURES:
        meta = {type(m).__name__: m for m in fields[field].metadata}
        assert meta["Le"].le == high, field
        if low_included:
            assert meta["Ge"].ge == low, field
        else:
            assert meta["Gt"].gt == low, field


def test_a_gpu_name_longer_than_the_api_takes_is_refused(capsys):
    assert main([*_argv(), "--gpu", "T" * 101]) == 2
    assert "argument --gpu: at most 100 characters" in capsys.readouterr().err
