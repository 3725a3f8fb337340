"""A live service + dashboard on the demo incident, and a headless Chromium driving it."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from tests.alerts.receiver import Receiver
from tests.conftest import scenarios_dir
from tests.helpers import CHROMIUM_FLAGS, free_port

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "dashboard"


class LiveServer:
    """uvicorn serving an app in a background thread."""

    def __init__(self, app, port: int, host: str = "127.0.0.1"):
        import uvicorn

        self.port = port
        self.base = f"http://{host}:{port}"
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.time() + 30
        while not self.server.started:
            if time.time() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


def empty_store(folder: Path) -> str:
    """Return the URL of a new SQLite store in ``folder``, migrated and empty."""
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade

    url = f"sqlite:///{folder / 'causeline.db'}"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def demo_store(folder: Path, hours: float) -> tuple[str, dict, str]:
    """Return (URL, demo info, writer token) of a new store in ``folder`` holding the demo."""
    from causeline.commands.up import load_demo, service_token
    from correlator.store.engine import make_engine

    url = empty_store(folder)
    demo = load_demo(url, hours=hours)
    engine = make_engine(url)
    try:
        _name, token = service_token(engine, "tests")
    finally:
        engine.dispose()
    return url, demo, token


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory):
    """Yield (base URL, demo info, writer token) of a live app holding the demo incident."""
    from causeline.commands.up import build_app, open_demo_incident, seed_demo_registry

    url, demo, token = demo_store(tmp_path_factory.mktemp("dash"), hours=6)
    port = free_port()
    chat = Receiver().start()  # a chat webhook: what the on-call engineer reads and clicks
    routes = {"channels": [{"name": "chat", "kind": "webhook", "url": f"{chat.url}/hook"}]}
    extra = {"alert_routes_json": json.dumps(routes), "alert_allowed_hosts": "127.0.0.1"}
    app = build_app(database_url=url, host="127.0.0.1", port=port, extra=extra)
    with LiveServer(app, port) as live:
        seed_demo_registry(live.base, token, demo)
        demo["incident"] = open_demo_incident(live.base, token, demo)
        demo["chat"] = chat
        yield live.base, demo, token
    chat.stop()


BUNDLES = {
    "petshop": ("petshop-low", "petshop-low_traffic-test-issue_0"),
    "nezha": ("nezha-train", "nezha-onlineboutique-2022-08-22-f00"),
}


def _evaluate_incident(url: str, sla: dict) -> int:
    """Open the imported SLA's incident as an operator would: evaluate a time in its breach."""
    from correlator.incidents.evaluator import evaluate_once
    from correlator.settings import ServiceSettings
    from correlator.store.engine import make_engine

    engine = make_engine(url)
    try:
        at = float(sla["breach_start"]) + 30
        report = evaluate_once(engine, holder="tests", now=at, settings=ServiceSettings())
    finally:
        engine.dispose()
    assert len(report["opened"]) == 1, report
    return report["opened"][0]


@pytest.fixture(scope="session")
def bundle_site(tmp_path_factory):
    """Yield (base URL, bundles) of a live app holding the PetShop and Nezha bundles.

    ``bundles`` maps "petshop" and "nezha" to their sla.json, with the incident's id.
    """
    from causeline.cli import main
    from causeline.commands.up import build_app
    from correlator.analysis import analyze
    from correlator.bundle import read_bundle

    folders = {k: scenarios_dir().joinpath(*parts) for k, parts in BUNDLES.items()}
    missing = [str(f) for f in folders.values() if not f.is_dir()]
    if missing:
        pytest.skip(f"scenario bundles not found: {missing}")
    url = empty_store(tmp_path_factory.mktemp("bundles"))
    bundles = {}
    for key, folder in folders.items():
        assert main(["import", str(folder), "--database-url", url]) == 0
        sla = json.loads((folder / "sla.json").read_text())
        bundles[key] = {
            **sla,
            "incident": _evaluate_incident(url, sla),
            "top": analyze(read_bundle(folder))["suspects"][0],
        }
    port = free_port()
    app = build_app(database_url=url, host="127.0.0.1", port=port)
    with LiveServer(app, port) as live:
        yield live.base, bundles


@pytest.fixture(scope="session")
def browser():
    """Yield a headless Chromium driven by the system chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    binary = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(driver_path).exists() or not Path(binary).exists():
        pytest.skip("chromium and chromium-driver are not installed (apt-get install them)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Return the folder for screenshots (git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
