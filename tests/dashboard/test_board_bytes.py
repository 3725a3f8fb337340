"""What a cold board load moves: rounded figure values, brotli plotly, no unused bundles."""

from __future__ import annotations

import ctypes
import ctypes.util
import re

import numpy as np
import pytest
from starlette.testclient import TestClient

from dashboard.client import ApiClient, FetchedSeries, transfer_headers
from dashboard.figures.board import DIGITS, PanelData, board_figure, significant
from dashboard.panels import PANELS
from dashboard.precompressed import digest, fresh_copies, takes_brotli
from tests.dashboard.conftest import empty_store
from tests.dashboard.test_transfer import BASE, DASHBOARD, PLOTLY_BASIC

ASSETS = DASHBOARD / "assets"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from causeline.commands.up import build_app

    url = empty_store(tmp_path_factory.mktemp("bytes"))
    with TestClient(build_app(database_url=url, host="127.0.0.1", port=8400), BASE) as c:
        yield c


def test_significant_keeps_what_the_hover_shows():
    rng = np.random.default_rng(3)
    values = rng.lognormal(0, 6, 20_000) * rng.choice([-1, 1], 20_000)
    out = significant(values)
    assert [f"{v:.{DIGITS}g}" for v in out] == [f"{v:.{DIGITS}g}" for v in values]
    np.testing.assert_allclose(out, values, rtol=5 * 10.0**-DIGITS)


def test_significant_writes_short_numbers_and_gaps_as_null():
    out = significant([0.0, 1.23456, 123456.7, -0.000123456, float("nan"), float("inf"), 2e-320])
    assert out == [0.0, 1.235, 123500.0, -0.0001235, None, None, 0.0]


def test_board_figure_sends_rounded_values_on_a_uniform_grid():
    ts = 1_700_000_000.0 + 15.0 * np.arange(200)
    values = np.sin(np.arange(200) / 7.0) * 1234.5678 + 5000
    values[17] = np.nan
    series = FetchedSeries("model_requests_per_second", {"instance": "a"}, ts, values)
    panel = PanelData(PANELS[0], [series])
    fig = board_figure([panel], window=(ts[0], ts[-1])).to_plotly_json()
    (trace,) = [t for t in fig["data"] if t.get("meta") is None]
    assert "x" not in trace and trace["dx"] == 15_000.0
    assert trace["y"][17] is None and len(trace["y"]) == 200
    drawn = np.array([np.nan if v is None else v for v in trace["y"]])
    np.testing.assert_allclose(drawn, values, rtol=5e-4)
    assert f":.{DIGITS}g" in trace["hovertemplate"]


def test_a_service_on_this_machine_is_asked_for_uncompressed_answers():
    assert transfer_headers("http://127.0.0.1:8400") == {"Accept-Encoding": "identity"}
    assert transfer_headers("http://[::1]:8400") == {"Accept-Encoding": "identity"}
    assert transfer_headers("https://causeline.example.org") == {}
    local = ApiClient("http://localhost:9", token="t")
    assert local._http.headers["accept-encoding"] == "identity"
    local.close()


def test_the_plotly_brotli_copy_matches_the_vendored_file():
    copies = fresh_copies(ASSETS)
    assert copies == {PLOTLY_BASIC.name: ASSETS / f"{PLOTLY_BASIC.name}.{digest(PLOTLY_BASIC)}.br"}
    found = ctypes.util.find_library("brotlidec")
    if not found:
        pytest.skip("no libbrotlidec to check the copy's contents")
    dec = ctypes.CDLL(found)
    data = copies[PLOTLY_BASIC.name].read_bytes()
    size = ctypes.c_size_t(PLOTLY_BASIC.stat().st_size + 1)
    out = ctypes.create_string_buffer(size.value)
    ok = dec.BrotliDecoderDecompress(ctypes.c_size_t(len(data)), data, ctypes.byref(size), out)
    assert ok == 1 and out.raw[: size.value] == PLOTLY_BASIC.read_bytes()


def test_a_stale_copy_is_not_used(tmp_path):
    (tmp_path / "a.js").write_text("new")
    (tmp_path / "a.js.0123456789abcdef.br").write_bytes(b"old")
    assert fresh_copies(tmp_path) == {}


@pytest.mark.parametrize(
    ("header", "takes"),
    [("gzip, deflate, br, zstd", True), ("br;q=0, gzip", False), ("gzip", False), ("BR", True)],
)
def test_takes_brotli(header, takes):
    assert takes_brotli(header) is takes


def test_plotly_goes_out_brotli_to_browsers_that_take_it_gzip_to_others(client):
    page = client.get("/board").text
    ref = re.search(r'src="(/assets/plotly-basic\.min\.js\?m=[^"]+)"', page).group(1)
    br = client.get(ref, headers={"accept-encoding": "gzip, deflate, br"})
    assert br.headers["content-encoding"] == "br"
    assert br.headers["vary"] == "Accept-Encoding"
    assert "javascript" in br.headers["content-type"]
    assert br.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert len(br.content) < 0.3 * PLOTLY_BASIC.stat().st_size
    gz = client.get(ref, headers={"accept-encoding": "gzip"})
    assert gz.headers["content-encoding"] == "gzip" and gz.content == PLOTLY_BASIC.read_bytes()


def test_the_page_loads_no_bundle_it_does_not_use(client):
    page = client.get("/board").text
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert scripts and not any("dash_table" in s for s in scripts), scripts
    assert any("dash_core_components" in s for s in scripts)
