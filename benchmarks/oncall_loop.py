"""The on-call loop, timed: breach -> first chat message -> Acknowledge in it -> the page says so.

Usage: .venv/bin/python benchmarks/oncall_loop.py [--rounds 5] [--eval-interval 5]
       [--worker-interval 1] [--database-url URL]

The whole product runs as `causeline up` runs it (API, dashboard, SLA evaluator and outbox
worker in one process on loopback), with a webhook channel to a loopback receiver standing
for the chat. Each round stores an SLA, ingests the sample that completes its breach, and
waits for the "opened" message; headless Chromium then opens the message's signed
Acknowledge link, gives a name, submits, and opens the incident page until it says who took
it. Printed per round and as medians: ingest -> message (including the wait for the next
evaluator pass), click -> page showing the acknowledgement, click -> "acknowledged" message.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from causeline.commands.up import build_app  # noqa: E402
from correlator.store.engine import make_engine, write_transaction  # noqa: E402
from correlator.store.migrate import upgrade  # noqa: E402
from correlator.store.tokens import create_token  # noqa: E402
from tests.alerts.receiver import Receiver  # noqa: E402
from tests.helpers import CHROMIUM_FLAGS, free_port, poll  # noqa: E402

STEP, FOR_S = 15.0, 30.0


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(driver), options=options)


def _wait(predicate, timeout: float = 60.0):
    got = poll(predicate, timeout, 0.02)
    if got is None:
        raise TimeoutError("waited too long")
    return got


def _round(i: int, api: httpx.Client, base: str, chat: Receiver, browser) -> tuple[float, ...]:
    """Run one breach through the loop; return (to message, click to page, click to message)."""
    from selenium.webdriver.common.by import By

    name, model = f"loop {i} p99", f"loop_{i}"
    sla = {"name": name, "metric": "model_latency_p99_ms", "labels": {"model": model}}
    sla |= {"op": ">", "threshold": 50, "for_seconds": FOR_S}
    api.post("/api/v1/slas", json=sla).raise_for_status()
    now = time.time()
    ts = [now - 600 + STEP * k for k in range(40)]
    values = [20.0 if t < now - FOR_S - 1 else 120.0 for t in ts]
    labels = {"model": model, "instance": "i-1"}
    series = {"name": "model_latency_p99_ms", "labels": labels}
    api.post("/api/v1/ingest", json={"series": [series | {"timestamps": ts, "values": values}]})
    t_ingest = time.time()
    last = {"timestamps": [t_ingest], "values": [130.0]}
    api.post("/api/v1/ingest", json={"series": [series | last]}).raise_for_status()

    def message(event):
        return next(
            (p for p in chat.posts if p["json"]["sla"] == name and p["json"]["event"] == event),
            None,
        )

    opened = _wait(lambda: message("opened"))
    to_message = opened["at"] - t_ingest
    number = opened["json"]["incident_id"]
    browser.get(opened["json"]["actions"]["acknowledge"])
    browser.find_element(By.NAME, "name").send_keys("bench.user")
    t_click = time.time()
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    browser.get(f"{base}/incidents/{number}")

    def shown():
        try:
            return (
                "acknowledged by bench.user" in browser.find_element(By.ID, "incident-state").text
            )
        except Exception:  # the page is still drawing
            return False

    _wait(shown)
    to_page = time.time() - t_click
    acked = _wait(lambda: message("acknowledged"))
    return to_message, to_page, acked["at"] - t_click


def main() -> int:
    """Run the rounds and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--eval-interval", type=float, default=5.0, help="the service's default: 5")
    ap.add_argument("--worker-interval", type=float, default=1.0, help="the default: 1")
    ap.add_argument("--database-url")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    url = args.database_url or f"sqlite:///{tmp.name}/loop.db"
    engine = make_engine(url)
    upgrade(engine)
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="bench-loop")
    chat = Receiver().start()
    routes = {"channels": [{"name": "chat", "kind": "webhook", "url": f"{chat.url}/hook"}]}
    extra = {
        "alert_routes_json": json.dumps(routes),
        "alert_allowed_hosts": "127.0.0.1",
        "evaluator_interval_seconds": args.eval_interval,
        "alert_worker_interval_seconds": args.worker_interval,
    }
    port = free_port()
    app = build_app(database_url=url, host="127.0.0.1", port=port, extra=extra)
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    _wait(lambda: server.started)
    base = f"http://127.0.0.1:{port}"
    api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    browser = _browser()
    rows = []
    try:
        for i in range(args.rounds):
            rows.append(_round(i, api, base, chat, browser))
            print(
                f"round {i}: ingest -> message {rows[-1][0]:.2f} s, click -> page "
                f"{rows[-1][1]:.2f} s, click -> acknowledged message {rows[-1][2]:.2f} s",
                flush=True,
            )
    finally:
        browser.quit()
        server.should_exit = True
        chat.stop()
    print(
        f"evaluator every {args.eval_interval:g} s, outbox worker every "
        f"{args.worker_interval:g} s, database {engine.dialect.name}, {len(rows)} rounds"
    )
    for k, what in enumerate(
        (
            "breach -> first message",
            "Acknowledge click -> page shows it",
            "Acknowledge click -> acknowledged message",
        )
    ):
        values = [r[k] for r in rows]
        print(f"{what}: median {statistics.median(values):.2f} s, max {max(values):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
