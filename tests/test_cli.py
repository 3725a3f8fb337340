"""The command line: help with examples, tokens, import/export errors, the real server."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import httpx
import pytest

from causeline.cli import build_parser, main
from tests.conftest import scenarios_dir
from tests.helpers import free_port, make_batch


def _subcommands(parser, path=()):
    """Yield (path, parser) for every subcommand below ``parser``, at every level."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield (*path, name), child
                yield from _subcommands(child, (*path, name))


def test_every_subcommand_help_shows_an_example():
    found = list(_subcommands(build_parser()))
    assert ("change", "add") in [path for path, _ in found]
    for path, p in found:
        text = p.format_help()
        assert "example" in text, " ".join(path)
        assert p.description, " ".join(path)


def test_token_create_prints_a_secret_once(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    assert main(["token", "create", "node-1", "--database-url", url]) == 0
    secret = capsys.readouterr().out.strip()
    assert secret.startswith("cl_") and len(secret) > 30
    assert main(["token", "create", "node-1", "--database-url", url]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["token", "list", "--database-url", url]) == 0
    listing = capsys.readouterr().out
    assert "node-1" in listing and secret not in listing


def test_export_rejects_bad_times(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["export", str(tmp_path / "o"), "--from", "yesterday", "--to", "1"])
    assert "ISO 8601" in capsys.readouterr().err


def test_serve_ingests_over_real_http(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    assert main(["token", "create", "agent", "--database-url", url]) == 0
    token = capsys.readouterr().out.strip()
    port = free_port()
    env = os.environ | {"CAUSELINE_DATABASE_URL": url}
    proc = subprocess.Popen(
        [sys.executable, "-m", "causeline.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                if httpx.get(f"{base}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        resp = httpx.post(
            f"{base}/api/v1/ingest", json=make_batch(), headers={"Authorization": f"Bearer {token}"}
        )
        assert resp.status_code == 200, resp.text
        assert resp.json()["inserted"] == 15
        got = httpx.get(
            f"{base}/api/v1/query_range",
            params={"match": "gpu_utilization_percent", "start": 0, "end": 2e9},
        )
        assert len(got.json()["data"]["result"]) == 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_import_progress_and_summary(tmp_path, capsys):
    folder = scenarios_dir() / "public" / "02-feature-disk-io"
    url = f"sqlite:///{tmp_path / 'i.db'}"
    assert main(["import", str(folder), "--database-url", url]) == 0
    out, err = capsys.readouterr()
    assert "(100%)" in err
    assert "series" in out and "new)" in out


def test_analyze_from_the_store(tmp_path, capsys):
    import json

    url = f"sqlite:///{tmp_path / 'a.db'}"
    folder = scenarios_dir() / "public" / "01-input-length-drift"
    assert main(["import", str(folder), "--database-url", url]) == 0
    capsys.readouterr()
    sla = "video_recall_v4 p99 latency"
    assert main(["analyze", "--sla", sla, "--database-url", url]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["sla"] == sla
    assert result["suspects"][0]["metric"] == "model_input_length_bucket"
    assert main(["analyze", "--sla", "nope", "--database-url", url]) == 2
    assert "no SLA named 'nope'" in capsys.readouterr().err
    assert main(["analyze"]) == 2
    assert "BUNDLE_DIR" in capsys.readouterr().err


def test_serve_refuses_several_workers_on_sqlite(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'w.db'}"
    assert main(["serve", "--workers", "2", "--database-url", url]) == 2
    assert "needs PostgreSQL" in capsys.readouterr().err
