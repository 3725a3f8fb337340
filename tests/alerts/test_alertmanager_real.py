"""A real Alertmanager between causeline and a receiver, and back into causeline's timeline."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

import httpx
import pytest
import uvicorn

from correlator.alerts.outbox import enqueue_incident_event
from correlator.alerts.worker import OutboxWorker
from correlator.api.app import create_app
from correlator.store.engine import make_engine, write_transaction
from correlator.store.events import list_events
from correlator.store.incidents import get_incident, resolve_incident
from correlator.store.migrate import upgrade
from correlator.store.tokens import create_token
from tests.alerts.conftest import alert_settings, store_incident
from tests.alerts.receiver import Receiver
from tests.helpers import free_port

pytestmark = pytest.mark.integration
BINARY = os.environ.get("CAUSELINE_ALERTMANAGER", "/usr/bin/prometheus-alertmanager")

CONFIG = """
route:
  receiver: both
  group_by: [alertname, incident]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
- name: both
  webhook_configs:
  - url: {receiver}/am
    send_resolved: true
  - url: {causeline}/api/v1/hooks/alertmanager
    send_resolved: true
    http_config:
      authorization:
        type: Bearer
        credentials: {token}
"""


def _binary() -> str:
    path = shutil.which(BINARY) or (BINARY if os.path.exists(BINARY) else None)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{BINARY} is missing (CI=true: the Alertmanager test must run)")
        pytest.skip(f"{BINARY} is not installed (Debian package prometheus-alertmanager)")
    return path


def _wait_ready(url: str, proc=None, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} never became ready")


@pytest.fixture
def stack(tmp_path):
    """Yield (engine, settings, receiver, causeline URL) with Alertmanager running between."""
    binary = _binary()
    engine = make_engine(f"sqlite:///{tmp_path / 'c.db'}")
    upgrade(engine)
    with write_transaction(engine) as conn:
        token = create_token(conn=conn, name="alertmanager")
    receiver = Receiver().start()
    am_port, port = free_port(), free_port()
    settings = alert_settings(
        engine, [{"name": "am", "kind": "alertmanager", "url": f"http://127.0.0.1:{am_port}"}]
    )
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, engine=engine), port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    causeline = f"http://127.0.0.1:{port}"
    (tmp_path / "am.yml").write_text(
        CONFIG.format(receiver=receiver.url, causeline=causeline, token=token)
    )
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'am.yml'}",
            f"--storage.path={tmp_path / 'am-data'}",
            f"--web.listen-address=127.0.0.1:{am_port}",
            "--cluster.listen-address=",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_ready(f"http://127.0.0.1:{am_port}/-/ready", proc)
        _wait_ready(f"{causeline}/openapi.json")
        yield engine, settings, receiver
    finally:
        proc.terminate()
        proc.wait(10)
        server.should_exit = True
        thread.join(10)
        receiver.stop()
        engine.dispose()


def test_alert_through_alertmanager_and_back(stack):
    engine, settings, receiver = stack
    incident = store_incident(engine)
    with write_transaction(engine) as conn:
        enqueue_incident_event(conn=conn, incident=incident, event="opened", settings=settings)
    worker = OutboxWorker(engine, settings, holder="w")
    assert worker.run_once()["sent"] == 1
    posts = receiver.wait_for(lambda p: any(x["json"]["status"] == "firing" for x in p))
    firing = posts[0]["json"]
    alert = firing["alerts"][0]
    assert alert["labels"]["alertname"] == "CauselineSLABreach"
    assert alert["labels"]["incident"] == str(incident["id"])
    assert alert["labels"]["sla"] == "click_rank_v3 p99 latency"
    assert alert["labels"]["model"] == "click_rank_v3" and alert["labels"]["team"] == "algo"
    assert alert["labels"]["severity"] == "critical"
    assert alert["annotations"]["top_suspect"].startswith("model_input_length_bucket")
    assert alert["annotations"]["incident_url"].endswith(f"/incidents/{incident['id']}")

    with write_transaction(engine) as conn:
        resolve_incident(conn=conn, incident_id=incident["id"], now=time.time(), by="t")
        resolved = get_incident(conn=conn, incident_id=incident["id"])
        enqueue_incident_event(conn=conn, incident=resolved, event="resolved", settings=settings)
    assert worker.run_once()["sent"] == 1
    posts = receiver.wait_for(lambda p: any(x["json"]["status"] == "resolved" for x in p))
    done = [x["json"] for x in posts if x["json"]["status"] == "resolved"][0]
    assert done["alerts"][0]["labels"] == alert["labels"]
    assert done["alerts"][0]["endsAt"] != "0001-01-01T00:00:00Z"

    # Alertmanager's webhook into causeline put the alert on the timeline.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            events = list_events(conn=conn, start=0, end=2e9)
        if {e["labels"]["alert_status"] for e in events} == {"firing", "resolved"}:
            break
        time.sleep(0.1)
    assert {e["labels"]["alert_status"] for e in events} == {"firing", "resolved"}
    assert all(
        e["kind"] == "alert" and e["labels"]["incident"] == str(incident["id"]) for e in events
    )
