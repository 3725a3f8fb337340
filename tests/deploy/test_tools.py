"""Checks by the real tools where present: promtool, amtool, kubectl kustomize, the CLI."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.deploy.files import DEPLOY, K8S, compose, k8s_objects

SECRET = "/run/secrets/causeline_token"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path:
        return path
    reason = f"{name} is not on PATH (Debian: apt-get install prometheus / prometheus-alertmanager)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true, so this check must run")
    pytest.skip(reason)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=20)


def _copy_with_token(src, dst_dir, token) -> str:
    dst = dst_dir / src.name
    dst.write_text(src.read_text().replace(SECRET, str(token)))
    return str(dst)


def test_promtool_accepts_prometheus_config_and_rules(tmp_path):
    """Check prometheus.yml and rules.yml with promtool (the token file mapped to a temp file)."""
    promtool = _tool("promtool")
    token = tmp_path / "token"
    token.write_text("cl_example")
    config = _copy_with_token(DEPLOY / "prometheus" / "prometheus.yml", tmp_path, token)
    _copy_with_token(DEPLOY / "prometheus" / "rules.yml", tmp_path, token)
    result = _run(promtool, "check", "config", config)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule files found" in result.stdout


def test_amtool_accepts_alertmanager_config(tmp_path):
    """Check alertmanager.yml with amtool."""
    amtool = _tool("amtool")
    token = tmp_path / "token"
    token.write_text("cl_example")
    config = _copy_with_token(DEPLOY / "alertmanager" / "alertmanager.yml", tmp_path, token)
    result = _run(amtool, "check-config", config)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "folder",
    [K8S, K8S / "autoscaling", K8S.parent / "k8s-fleet"],
    ids=["core", "autoscaling", "fleet"],
)
def test_kubectl_kustomize_renders(folder):
    """Render each kustomization offline with kubectl (skipped where kubectl is absent)."""
    kubectl = shutil.which("kubectl")
    if not kubectl:
        pytest.skip("kubectl is not on PATH")
    result = _run(kubectl, "kustomize", str(folder))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\nkind: ") + result.stdout.startswith("kind: ") >= 3


def _commands() -> list[tuple[str, list[str]]]:
    out = []
    for name, svc in compose()["services"].items():
        if svc.get("image", "").startswith("causeline") and "command" in svc:
            out.append((f"compose:{name}", [str(a) for a in svc["command"]]))
    for path, doc in k8s_objects():
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("containers", []):
            if c["image"].startswith("causeline") and "args" in c:
                out.append((f"{path.name}:{c['name']}", [str(a) for a in c["args"]]))
    return out


@pytest.mark.parametrize(("where", "argv"), _commands(), ids=[w for w, _ in _commands()])
def test_container_commands_parse_with_the_cli(where, argv):
    """Parse every causeline command the containers run with the real argument parser."""
    from causeline.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    if argv[0] not in commands:
        pytest.skip(f"{where}: causeline has no {argv[0]!r} subcommand yet")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{where}: `causeline {' '.join(argv)}` does not parse ({exc})")
    assert args.func


def _env_of(kind: str) -> list[dict[str, str]]:
    out = []
    for svc in compose()["services"].values():
        env = svc.get("environment", {})
        if any(k.startswith(kind) for k in env):
            out.append({k: str(v) for k, v in env.items()})
    for _, doc in k8s_objects():
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("containers", []):
            env = {e["name"]: e.get("value", "x") for e in c.get("env", [])}
            if any(k.startswith(kind) for k in env):
                out.append(env)
    return out


def test_agent_environment_is_settings_the_agent_knows():
    """Load every agent container's CAUSELINE_AGENT_* variables through the agent config."""
    from collector.config import load_config

    envs = _env_of("CAUSELINE_AGENT_")
    assert len(envs) >= 2
    for env in envs:
        config = load_config(env={k: v for k, v in env.items() if "${" not in v})
        assert config.spool_dir == env["CAUSELINE_AGENT_SPOOL_DIR"]


def test_service_and_dashboard_environment_names_are_settings():
    """Name only settings the service and dashboard read in CAUSELINE_* variables."""
    from correlator.settings import ServiceSettings
    from dashboard.settings import DashboardSettings

    known = {f"CAUSELINE_{f.upper()}" for f in ServiceSettings.model_fields}
    known |= {f"CAUSELINE_DASHBOARD_{f.upper()}" for f in DashboardSettings.model_fields}
    known |= {"CAUSELINE_HEALTH_URL", "CAUSELINE_HOME"}
    for env in _env_of("CAUSELINE_"):
        for name in env:
            if name.startswith("CAUSELINE_") and not name.startswith("CAUSELINE_AGENT_"):
                assert name in known, f"no setting reads {name}"
