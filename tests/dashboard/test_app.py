"""The app factory, the read-only rule, the layering and the demo data."""

from __future__ import annotations

import ast
from pathlib import Path

import httpx
import numpy as np
import pytest

from dashboard.app import create_dashboard
from dashboard.client import ApiClient
from dashboard.context import Context
from dashboard.pages import changes
from dashboard.settings import DashboardSettings

ROOT = Path(__file__).resolve().parents[2]


def _app(**settings):
    settings = DashboardSettings(api_url="http://127.0.0.1:9", api_token="t", **settings)
    return create_dashboard(settings), settings


def _buttons(tree, found=None):
    found = [] if found is None else found
    if getattr(tree, "id", None) in ("change-submit", "change-update"):
        found.append(tree)
    children = getattr(tree, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            _buttons(child, found)
    return found


def test_non_loopback_without_auth_is_read_only_and_says_so():
    app, settings = _app(bind_host="0.0.0.0", read_auth="open")
    layout = app.server.test_client().get("/_dash-layout").get_data(as_text=True)
    assert "Read-only: bound to 0.0.0.0 with no auth configured" in layout
    context = Context(ApiClient(settings.api_url, token="t"), settings)
    with app.server.test_request_context("/changes"):
        buttons = _buttons(changes.layout(context))
    assert buttons and all(b.disabled for b in buttons)


def test_auth_proxy_header_names_the_writer():
    app, _settings = _app(bind_host="0.0.0.0", user_header="X-Forwarded-User", read_auth="open")
    client = app.server.test_client()
    named = client.get("/_dash-layout", headers={"X-Forwarded-User": "wang.fang"})
    assert "Signed in as wang.fang" in named.get_data(as_text=True)
    assert "Read-only: no X-Forwarded-User header" in client.get("/_dash-layout").get_data(
        as_text=True
    )


def test_two_apps_can_live_in_one_process():
    first, _ = _app()
    second, _ = _app(url_prefix="/dash/")
    assert first.server is not second.server
    assert second.config.requests_pathname_prefix == "/dash/"


def test_dashboard_imports_no_service_module():
    for path in sorted((ROOT / "dashboard").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in ("correlator", "collector", "causeline"), (
                    f"{path}: imports {name} (the dashboard talks to the service over HTTP)"
                )


def test_demo_tells_the_long_input_story_deterministically():
    from causeline.demo import STEP, breach_window, demo_bundle

    end = 1_733_140_000.0
    bundle = demo_bundle(hours=3, end=end)
    again = demo_bundle(hours=3, end=end)
    assert all(
        np.array_equal(a.values, b.values) for a, b in zip(bundle.series, again.series, strict=True)
    )
    last = end // STEP * STEP
    b0, b1 = breach_window(last)

    def one(name, **labels):
        return next(
            s
            for s in bundle.series
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        )

    p99 = one("model_latency_p99_ms", instance="demo-i-1")
    inside = (p99.ts > b0 + 300) & (p99.ts < b1 - 300)
    assert abs(np.median(p99.values[~inside & (p99.ts < b0 - 900)]) - 20) < 2
    assert abs(np.median(p99.values[inside]) - 120) < 5
    gpu = one("gpu_utilization_percent", host="demo-gpu-node-1", gpu="0")
    assert 25 < np.median(gpu.values[inside[: gpu.ts.size]]) < 40

    def long_share(mask):
        total = one("model_input_length_bucket", instance="demo-i-1", le="+Inf").values
        upto = one("model_input_length_bucket", instance="demo-i-1", le="128").values
        idx = np.flatnonzero(mask)
        lo, hi = idx[0], idx[-1]
        return 1 - (upto[hi] - upto[lo]) / (total[hi] - total[lo])

    assert abs(long_share(p99.ts < b0 - 900) - 0.05) < 0.01
    assert abs(long_share(inside) - 0.35) < 0.02
    assert b1 < last and last - b1 == 20 * 60
    assert all("[demo]" in c["summary"] for c in bundle.changes)
    assert "DEMO" in bundle.sla["name"]


@pytest.mark.integration
def test_the_demo_seeds_both_hosts_fingerprints(demo_site):
    base, _demo, _token = demo_site
    prints = httpx.get(f"{base}/api/v1/fingerprints", timeout=30).json()
    assert {"demo-gpu-node-1", "demo-gpu-node-2"} <= {p["host"] for p in prints}


def test_up_and_demo_are_commands():
    from causeline.cli import build_parser
    from causeline.commands.up import run_demo, run_up

    parser = build_parser()
    up = parser.parse_args(["up", "--host", "0.0.0.0", "--port", "9000"])
    assert up.func is run_up and up.port == 9000 and up.host == "0.0.0.0"
    demo = parser.parse_args(["demo", "--database-url", "sqlite:///x.db"])
    assert demo.func is run_demo and demo.hours == 6.0


def test_each_app_renders_its_pages_with_its_own_context():
    """Dash's page registry is process-wide: a later app must not take over earlier pages."""
    import dash

    writer, _ = _app()  # loopback with a token: writes allowed
    reader, _ = _app(bind_host="0.0.0.0", read_auth="open")  # registered last: read-only
    layout = next(p["layout"] for p in dash.page_registry.values() if p["path"] == "/changes")
    with writer.server.test_request_context("/changes"):
        assert not any(b.disabled for b in _buttons(layout()))
    with reader.server.test_request_context("/changes"):
        assert all(b.disabled for b in _buttons(layout()))
