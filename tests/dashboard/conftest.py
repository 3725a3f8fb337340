"""A live service + dashboard on the demo incident, and a headless Chromium driving it."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import CHROMIUM_FLAGS, free_port

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "dashboard"


class LiveServer:
    """uvicorn serving an app in a background thread."""

    def __init__(self, app, port: int):
        import uvicorn

        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
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


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory):
    """Yield (base URL, demo info, writer token) of a live app holding the demo incident."""
    from causeline.commands.up import (
        build_app,
        load_demo,
        open_demo_incident,
        seed_demo_registry,
        service_token,
    )
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade

    url = f"sqlite:///{tmp_path_factory.mktemp('dash') / 'causeline.db'}"
    engine = make_engine(url)
    upgrade(engine)
    demo = load_demo(url, hours=6)
    _name, token = service_token(engine, "tests")
    engine.dispose()
    port = free_port()
    app = build_app(database_url=url, host="127.0.0.1", port=port)
    with LiveServer(app, port) as live:
        seed_demo_registry(live.base, token, demo)
        demo["incident"] = open_demo_incident(live.base, token, demo)
        yield live.base, demo, token


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
