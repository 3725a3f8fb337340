"""The command line: help with examples, tokens, import/export errors, the real server."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import httpx
import pytest

from causeline.cli import build_parser, main
from tests.conftest import scenarios_dir
from tests.helpers import free_port, make_batch, wait_ready


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
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "causeline.cli", "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, proc, log)
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


def test_an_unreachable_database_is_one_line_with_the_password_masked(capsys):
    url = "postgresql+psycopg://u:secret@127.0.0.1:1/x"
    assert main(["demo", "--database-url", url]) == 2
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and "secret" not in err
    assert "postgresql+psycopg://u:***@127.0.0.1:1/x" in err
    assert "Connection refused" in err and "check that the server runs" in err


@pytest.fixture
def fingerprint_server():
    """Yield the URL of a stand-in service answering the latest fingerprint of any host."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlparse

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the http.server name)
            host = parse_qs(urlparse(self.path).query)["host"][0]
            kernel = "6.1.0-25" if host == "n1" else "6.1.0-26"
            doc = {"host": host, "ts": 1_733_220_000.0, "fingerprint": {"kernel": kernel}}
            body = json.dumps(doc).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(5)


def test_env_diff_names_iso_times_and_logs_no_requests(fingerprint_server, capsys, caplog):
    import logging

    caplog.set_level(logging.INFO)
    assert main(["env", "diff", "n1", "n2", "--server", fingerprint_server]) == 1
    out, err = capsys.readouterr()
    assert "A = n1 (2024-12-03T10:00:00Z)" in out and "1733220000" not in out
    assert "kernel  6.1.0-25  ->  6.1.0-26" in out
    assert "HTTP Request" not in err + caplog.text


def test_a_mistyped_sqlite_path_is_refused_not_created(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'typo-dir' / 'x.db'}"
    assert main(["incident", "list", "--database-url", url]) == 2
    err = capsys.readouterr().err
    assert "no causeline database at" in err and "typo-dir" in err and "db upgrade" in err
    assert not (tmp_path / "typo-dir").exists()


def test_a_postgres_scheme_url_is_postgresql(capsys):
    from tests.conftest import PG_URL, require_postgres

    require_postgres()
    plain = PG_URL.replace("postgresql+psycopg://", "postgres://")
    assert main(["db", "upgrade", "--database-url", plain]) == 0
    assert main(["incident", "list", "--database-url", plain]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    """`causeline ... | head` closes the pipe early: no traceback, SIGPIPE's status."""
    code = (  # a command printing 16 MB; its reader stops after one line
        "import argparse, sys\n"
        "from causeline import cli\n"
        "real = argparse.ArgumentParser.parse_args\n"
        "def parse(self, *a, **k):\n"
        "    ns = real(self, *a, **k)\n"
        "    ns.func = lambda args: [print('x' * 80) for _ in range(200_000)] and 0\n"
        "    return ns\n"
        "argparse.ArgumentParser.parse_args = parse\n"
        "sys.exit(cli.main(['openapi']))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # what head does after its lines
    err = proc.stderr.read().decode()
    assert proc.wait(30) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err
