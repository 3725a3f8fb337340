"""Settings and numeric options out of their range are refused in one line naming them."""

from __future__ import annotations

import argparse
import typing

import pytest
from pydantic import ValidationError

from causeline.cli import main
from causeline.commands.options import parse_count, parse_port, parse_positive, parse_positive_count
from correlator.settings import ServiceSettings
from dashboard.settings import DashboardSettings


@pytest.fixture
def no_server(monkeypatch):
    """Make serving fail at once: a setting let through must not leave the test waiting."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("the server started with a setting out of range")

    monkeypatch.setattr("uvicorn.run", refuse)


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    [
        ("CAUSELINE_RAW_RETENTION_DAYS", "-1", "greater than or equal to 0"),
        ("CAUSELINE_MAX_FUTURE_SECONDS", "-5", "greater than or equal to 0"),
        ("CAUSELINE_EVALUATOR_INTERVAL_SECONDS", "0", "greater than 0"),
        ("CAUSELINE_READ_MAX_POINTS", "abc", "valid integer"),
        ("CAUSELINE_ROLLUP_MAX_HOURS", "0", "greater than 0"),
    ],
)
def test_serve_refuses_a_setting_out_of_range_in_one_line(
    tmp_path, capsys, monkeypatch, no_server, variable, value, reason
):
    monkeypatch.setenv(variable, value)
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert main(["serve", "--database-url", url]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"causeline serve: error: {variable}={value!r}: " in err
    assert reason in err


def test_the_dashboard_names_its_own_variable(capsys, monkeypatch, no_server):
    monkeypatch.setenv("CAUSELINE_DASHBOARD_MAX_POINTS", "0")
    assert main(["dashboard"]) == 2
    err = capsys.readouterr().err
    assert "causeline dashboard: error: CAUSELINE_DASHBOARD_MAX_POINTS='0': " in err
    assert "greater than 0" in err


def test_the_documented_edge_values_are_accepted():
    settings = ServiceSettings(
        max_future_seconds=0,  # no bound
        alert_max_age_seconds=0,  # send whatever the age
        raw_retention_days=0,  # today only
        autoscale_min_replicas=0,
        prometheus_retries=0,
        rollup_lag_seconds=0,
        bind_port=65535,
    )
    assert settings.latest_accepted(100.0) is None
    assert ServiceSettings(max_future_seconds=None).latest_accepted(100.0) is None


def _number_kind(annotation) -> type | None:
    """Return int or float when a setting holds that number (``X | None`` looked into)."""
    for kind in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(kind) is typing.Annotated:
            kind = typing.get_args(kind)[0]
        if kind in (int, float):
            return kind
    return None


@pytest.mark.parametrize("model", [ServiceSettings, DashboardSettings])
def test_every_numeric_setting_refuses_a_negative_and_an_infinite_value(model):
    tried, let_through = 0, []
    for name, info in model.model_fields.items():
        kind = _number_kind(info.annotation)
        for bad in {int: [-1], float: [-1.0, float("inf")], None: []}[kind]:
            tried += 1
            try:
                model(**{name: bad})
            except ValidationError:
                continue
            let_through.append((name, bad))
    assert tried >= 3  # the numbers were found: max_points, ports, intervals...
    assert not let_through, f"give these a finite, bounded type (Seconds...): {let_through}"


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_a_float_setting_must_be_finite(tmp_path, capsys, monkeypatch, no_server, value):
    monkeypatch.setenv("CAUSELINE_EVALUATOR_INTERVAL_SECONDS", value)
    assert main(["serve", "--database-url", f"sqlite:///{tmp_path / 'f.db'}"]) == 2
    assert "Input should be a finite number" in capsys.readouterr().err
    monkeypatch.setenv("CAUSELINE_MAX_FUTURE_SECONDS", value)  # None-able: still finite
    monkeypatch.delenv("CAUSELINE_EVALUATOR_INTERVAL_SECONDS")
    assert main(["serve", "--database-url", f"sqlite:///{tmp_path / 'f.db'}"]) == 2


def test_retain_refuses_negative_days_before_touching_the_store(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with pytest.raises(SystemExit) as exc:
        main(["db", "retain", "--raw-days", "-1", "--database-url", url])
    assert exc.value.code == 2
    assert "argument --raw-days: '-1' is not a whole number of 0 or more" in capsys.readouterr().err
    assert not (tmp_path / "r.db").exists()


@pytest.mark.parametrize(
    ("parse", "good", "bad"),
    [
        (parse_count, {"0": 0, "7": 7}, ["-1", "1.5", "x", ""]),
        (parse_positive_count, {"1": 1, "20": 20}, ["0", "-3", "2.0"]),
        (parse_positive, {"0.5": 0.5, "2": 2.0}, ["0", "-1", "nan", "inf", "x"]),
        (parse_port, {"1": 1, "65535": 65535}, ["0", "65536", "-80", "http"]),
    ],
)
def test_numeric_option_types(parse, good, bad):
    for text, value in good.items():
        assert parse(text) == value
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match="give one such as"):
            parse(text)


def test_deep_links_follow_the_port_the_service_runs_on(monkeypatch):
    """`causeline demo --port 8455` linked alerts to :8400, another server."""
    from correlator.settings import ServiceSettings

    monkeypatch.delenv("CAUSELINE_PUBLIC_URL", raising=False)
    assert ServiceSettings(bind_port=8455).public_url == "http://127.0.0.1:8455"
    assert ServiceSettings(bind_host="0.0.0.0", bind_port=9).public_url == "http://127.0.0.1:9"
    assert ServiceSettings(bind_host="::1", bind_port=9).public_url == "http://[::1]:9"
    assert ServiceSettings(public_url="https://cl.example", bind_port=9).public_url == (
        "https://cl.example"
    )
    monkeypatch.setenv("CAUSELINE_PUBLIC_URL", "https://env.example")
    assert ServiceSettings(bind_port=9).public_url == "https://env.example"
