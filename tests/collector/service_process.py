"""Run the real causeline service and agent as processes for end-to-end tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "causeline.cli"]


def _run(args: list[str]) -> str:
    done = subprocess.run(CLI + args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"causeline {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


class ServiceProcess:
    """``causeline serve`` on loopback over a SQLite file; stop and start it at will."""

    def __init__(self, tmp: Path, port: int):
        self.url_db = f"sqlite:///{tmp / 'causeline.db'}"
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = tmp / "service.log"
        self.proc: subprocess.Popen | None = None
        _run(["db", "upgrade", "--database-url", self.url_db])
        self.token = _run(["token", "create", "e2e-agent", "--database-url", self.url_db]).strip()

    def start(self) -> None:
        """Start the service and wait until it answers."""
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                CLI
                + [
                    "serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--database-url",
                    self.url_db,
                ],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url + "/api/v1/series", params={"match": "x"}, timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"service did not start: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        """Stop the service (SIGTERM, then SIGKILL)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def timestamps(self, selector: str) -> list[float]:
        """Return the stored timestamps of the one series matching ``selector``."""
        resp = httpx.get(
            self.url + "/api/v1/query_range",
            params={"match": selector, "start": 0, "end": 4e9},
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=30,
        )
        resp.raise_for_status()
        result = resp.json()["data"]["result"]
        assert len(result) <= 1, result
        return [float(t) for t, _ in result[0]["values"]] if result else []


def start_agent(tmp: Path, *, server: str, token: str, host: str) -> subprocess.Popen:
    """Start ``causeline agent`` at a 1 s interval with the host source only."""
    config = tmp / "agent.toml"
    config.write_text(
        'interval = "1s"\nbatch_max_age = "1s"\nretry_max = "2s"\n'
        f'sources = ["host"]\nspool_dir = "{tmp / "spool"}"\nmetrics_port = 0\n'
    )
    env = {**os.environ, "CAUSELINE_AGENT_SERVER": server, "CAUSELINE_AGENT_TOKEN": token}
    with open(tmp / "agent.log", "a") as log:
        return subprocess.Popen(
            CLI + ["agent", "--config", str(config), "--host", host],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
