"""Evidence numbers read in the units a person uses."""

from __future__ import annotations

import pytest

from correlator.analysis.evidence import describe, number, series_sentence, unit_of


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (8.9e-3, "s", "8.9 ms"),
        (0.417, "s", "417 ms"),
        (4.2e-5, "s", "42 us"),
        (1.5, "s", "1.5 s"),
        (0.0, "s", "0 s"),
        (-0.02, "s", "-20 ms"),
        (32834, "B", "32.1 KiB"),
        (512, "B", "512 B"),
        (5e6, "B/s", "4.8 MiB/s"),
        (3 * 2**30, "B", "3.0 GiB"),
        (12.3, "ms", "12.3 ms"),
        (0.5, "%", "0.5%"),
        (1e-4, "", "1.00e-04"),
        (2.98e-3, "", "0.00298"),
        (306.4, "/s", "306/s"),
        (float("nan"), "s", "n/a"),
    ],
)
def test_number_says_a_value_in_the_largest_multiple_it_reaches(value, unit, text):
    assert number(value, unit) == text


def test_a_latency_in_seconds_reads_in_ms():
    said = series_sentence(
        metric="pod_client_latency_p95_seconds",
        labels={"service": "currencyservice"},
        before=8.9e-3,
        after=0.0232,
        z=12,
        onset=1_661_141_880.0,
        lead=46,
    )
    assert said.startswith(
        "pod client latency p95 seconds on currencyservice 8.9 ms -> 23.2 ms (+12 sigma) from"
    )


def test_signals_from_calls_and_logs_say_whose_they_are():
    assert describe(
        "traces_service_graph_request_server_p90_seconds", {"client": "gw", "server": "cart"}
    ) == ("cart (server side of gw -> cart): traces service graph request server p90 seconds")
    assert describe("log_lines:count1m", {"service": "pay", "level": "error"}) == (
        "error log lines on pay"
    )
    assert unit_of("log_lines:count1m") == "/min" and unit_of("x:increase5m") == "/5m"
    assert describe("job:rate:sum", {}) == "job (rate:sum)"
