"""Load the joint board in headless Chromium; print time to the last panel, bytes, requests.

Run: .venv/bin/python benchmarks/dashboard.py [--hours 24] [--runs 3]
     (24 h of 15 s demo data, the model's board)
     .venv/bin/python benchmarks/dashboard.py --bundle ../shared/scenarios/petshop-low/...
     (an imported incident: the board 30 min before to 15 min after its breach, with the
     incident the evaluator opens there)
     .venv/bin/python benchmarks/dashboard.py --under-ingest
     (the same while another process posts 10,000-sample batches as fast as they are taken)
Targets: median time to the last panel under 1.5 s, a cold load under 700 kB, a warm one
(browser cache kept) under 150 kB. ``--largest N`` lists the N largest responses of a cold load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers import CHROMIUM_FLAGS, free_port  # noqa: E402

# Every panel (one title annotation each) has a drawn subplot and a trace with points.
ALL_DRAWN = """
const gd = document.querySelector('#board-graph .js-plotly-plot');
const status = document.getElementById('board-status');
if (!gd || !gd._fullLayout || !gd._fullData || !status || !status.innerText) { return null; }
const panels = (gd.layout.annotations || []).length;
const axes = new Set(gd._fullData.filter(t => t._length > 0).map(t => t.yaxis || 'y'));
const drawn = document.querySelectorAll('#board-graph .cartesianlayer .subplot').length;
return (panels > 0 && axes.size >= panels && drawn >= panels) ? [performance.now(), panels] : null;
"""


def _start(url: str) -> str:
    import uvicorn

    from causeline.commands.serve import tune_process
    from causeline.commands.up import build_app

    port = free_port()
    app = build_app(database_url=url, host="127.0.0.1", port=port)
    tune_process()  # as `causeline up` does
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}"


def _empty_store() -> str:
    from correlator.store.engine import make_engine
    from correlator.store.migrate import upgrade

    url = f"sqlite:///{tempfile.mkdtemp(prefix='causeline-bench-')}/causeline.db"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def _demo_board(hours: float) -> tuple[str, str]:
    from causeline.commands.up import load_demo

    url = _empty_store()
    began = time.perf_counter()
    demo = load_demo(url, hours=hours)
    print(f"loaded {hours:g} h of 15 s demo data in {time.perf_counter() - began:.1f} s")
    return f"{_start(url)}/board?model={demo['model']}&range=24h", url


def _post_batches(base: str, token: str, stop, posted) -> None:
    """Post 10,000-sample batches of the last hour until ``stop`` is set (its own process)."""
    import httpx
    import orjson

    start = time.time() - 3600
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        k = 0
        while not stop.is_set():
            stamps = [start + (k * 20 + j) * 0.01 for j in range(20)]
            series = [
                {
                    "name": "load_metric",
                    "labels": {"host": f"load-{i}"},
                    "timestamps": stamps,
                    "values": [float(i + j) for j in range(20)],
                }
                for i in range(500)
            ]
            client.post("/api/v1/ingest", content=orjson.dumps({"series": series}))
            k += 1
            posted.value = k


class IngestLoad:
    """Another process posting batches to the board's server while it is measured."""

    def __init__(self, board: str, db_url: str):
        import multiprocessing

        from correlator.store.engine import make_engine, write_transaction
        from correlator.store.tokens import create_token

        engine = make_engine(db_url)
        with write_transaction(engine) as conn:
            token = create_token(conn=conn, name="load", scope="ingest")
        engine.dispose()
        ctx = multiprocessing.get_context("spawn")
        self.stop, self.posted = ctx.Event(), ctx.Value("i", 0)
        base = board.split("/board")[0]
        args = (base, token, self.stop, self.posted)
        self.proc = ctx.Process(target=_post_batches, args=args, daemon=True)
        self.proc.start()
        while self.posted.value < 3:  # the writer is up
            time.sleep(0.1)
        self.first, self.began = self.posted.value, time.perf_counter()

    def end(self) -> float:
        """Stop the writer; return the samples/s it wrote since it was up."""
        self.stop.set()
        self.proc.join(timeout=60)
        return (self.posted.value - self.first) * 10_000 / (time.perf_counter() - self.began)


def _bundle_board(bundle: Path) -> str:
    from causeline.cli import main
    from correlator.incidents.evaluator import evaluate_once
    from correlator.settings import ServiceSettings
    from correlator.store.engine import make_engine

    url = _empty_store()
    if main(["import", str(bundle), "--database-url", url]) != 0:
        raise SystemExit(f"cannot import {bundle}")
    at = round(float(json.loads((bundle / "sla.json").read_text())["breach_start"]))
    engine = make_engine(url)
    report = evaluate_once(engine, holder="benchmark", now=at + 30, settings=ServiceSettings())
    engine.dispose()
    print(f"incident opened by evaluating {at + 30}: {report['opened'] or report.get('reason')}")
    return f"{_start(url)}/board?from={at - 1800}&to={at + 900}", url


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def _network(driver) -> tuple[int, dict[str, int]]:
    """Return the requests sent and the bytes received per URL."""
    urls: dict[str, str] = {}
    sizes: dict[str, int] = {}
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message["params"]
        if message["method"] == "Network.requestWillBeSent":
            urls[params["requestId"]] = params["request"]["url"]
        elif message["method"] == "Network.loadingFinished":
            url = urls.get(params["requestId"], params["requestId"])
            sizes[url] = sizes.get(url, 0) + int(params["encodedDataLength"])
    return len(urls), sizes


def measure(driver, url: str, *, cold: bool = True) -> dict:
    """Load the board once and return seconds to the last panel drawn, bytes and requests."""
    driver.get_log("performance")
    driver.execute_cdp_cmd("Network.enable", {})
    if cold:
        driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(url)
    deadline = time.time() + 60
    drawn = None
    while drawn is None and time.time() < deadline:
        drawn = driver.execute_script(ALL_DRAWN)
        if drawn is None:
            time.sleep(0.02)
    time.sleep(0.5)  # let trailing requests finish before counting
    requests, sizes = _network(driver)
    status = driver.find_element("id", "board-status").text
    return {
        "seconds": drawn[0] / 1000.0 if drawn else float("nan"),
        "panels": int(drawn[1]) if drawn else 0,
        "bytes": sum(sizes.values()),
        "sizes": sizes,
        "requests": requests,
        "status": status,
    }


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bundle", type=Path, default=None, help="an incident bundle folder")
    parser.add_argument("--largest", type=int, default=0, help="list the N largest responses")
    parser.add_argument(
        "--under-ingest", action="store_true", help="load the board while batches are written"
    )
    args = parser.parse_args()
    url, db_url = _bundle_board(args.bundle) if args.bundle else _demo_board(args.hours)
    load = IngestLoad(url, db_url) if args.under_ingest else None
    driver = _browser()
    try:
        results = [measure(driver, url) for _ in range(args.runs)]
        warm = measure(driver, url, cold=False)
    finally:
        driver.quit()
        if load:
            print(f"meanwhile another process wrote {load.end():,.0f} samples/s")
    for i, r in enumerate(results, 1):
        print(
            f"run {i}: last of {r['panels']} panels drawn {r['seconds']:.2f} s, "
            f"{r['bytes'] / 1e6:.2f} MB "
            f"transferred, {r['requests']} requests (cold browser cache)"
        )
    print(
        f"warm: last panel drawn {warm['seconds']:.2f} s, {warm['bytes'] / 1e3:.0f} kB "
        f"transferred, {warm['requests']} requests (browser cache kept)"
    )
    for name, size in sorted(results[-1]["sizes"].items(), key=lambda kv: -kv[1])[: args.largest]:
        print(f"  {size / 1e3:8.1f} kB  {name.split('?')[0]}")
    print(f"server: {results[-1]['status']}")
    median = statistics.median(r["seconds"] for r in results)
    print(f"median of {args.runs}: {median:.2f} s to the last panel")
    cold_kb = max(r["bytes"] for r in results) / 1e3
    ok = median < 1.5 and cold_kb < 700 and warm["bytes"] / 1e3 < 150
    print(
        f"targets < 1.5 s, cold < 700 kB, warm < 150 kB: {'met' if ok else 'NOT met'} "
        f"(median {median:.2f} s, cold {cold_kb:.0f} kB, warm {warm['bytes'] / 1e3:.0f} kB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
