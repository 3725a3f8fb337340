"""`causeline up` revokes the dashboard's token however it stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from correlator.store.engine import make_engine
from correlator.store.tokens import list_tokens
from tests.helpers import free_port


def _tokens(url: str) -> list[dict]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return list_tokens(conn=conn)
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "sig",
    [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT],
    ids=lambda sig: sig.name,
)
def test_up_revokes_its_token_when_stopped_by_a_signal(tmp_path, sig):
    url = f"sqlite:///{tmp_path / 'up.db'}"
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "causeline.cli", "up", "--port", str(port), "--database-url", url],
        env=os.environ | {"CAUSELINE_DATABASE_URL": url},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        for _ in range(300):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.1)
        else:
            pytest.fail("causeline up did not start")
        [mine] = _tokens(url)
        assert mine["name"].startswith("dashboard-up-") and not mine["revoked"]
        assert mine["scope"] == "write"
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert [(t["name"], t["revoked"]) for t in _tokens(url)] == [(mine["name"], True)]
