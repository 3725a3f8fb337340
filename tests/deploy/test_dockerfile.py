"""The Dockerfile: multi-stage, non-root, a health check, the package the README installs."""

from __future__ import annotations

import re

from tests.deploy.files import ROOT, compose, dockerfile, pyproject, readme_install


def test_dockerfile_is_multi_stage_with_a_wheel_builder():
    """Build a wheel of the project in a builder stage and copy none of the sources after."""
    df = dockerfile()
    assert len(df.stages) >= 2
    builder, runtime = df.stages[0], df.stages[-1]
    assert builder.name
    assert any("pyproject.toml" in arg for arg in builder.all("COPY"))
    assert any("pip wheel" in arg for arg in builder.all("RUN"))
    base = runtime.base.replace("${PYTHON_IMAGE}", df.global_args.get("PYTHON_IMAGE", ""))
    assert base == "python:3.11-slim"
    uses_builder = [a for a in runtime.all("RUN") + runtime.all("COPY") if builder.name in a]
    assert uses_builder, "the runtime stage does not take the builder's wheels"


def test_dockerfile_runs_as_a_non_root_user():
    """End the final stage on a USER that is not root."""
    users = dockerfile().stages[-1].all("USER")
    assert users, "no USER in the final stage"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")


def test_dockerfile_health_check_hits_healthz_on_the_service_port():
    """Probe /healthz on the port the compose service listens on."""
    df = dockerfile()
    runtime = df.stages[-1]
    checks = runtime.all("HEALTHCHECK")
    assert checks and "CMD" in checks[-1]
    url = df.arg_default("CAUSELINE_HEALTH_URL", runtime)
    assert "CAUSELINE_HEALTH_URL" in checks[-1]
    port = compose()["services"]["service"]["command"]
    port = port[port.index("--port") + 1]
    assert url == f"http://127.0.0.1:{port}/healthz"


def test_dockerfile_exposes_and_enters_causeline():
    """Expose the service, dashboard and agent ports and enter the causeline script."""
    runtime = dockerfile().stages[-1]
    exposed = {p.split("/")[0] for arg in runtime.all("EXPOSE") for p in arg.split()}
    services = compose()["services"]
    wanted = {
        services["service"]["command"][services["service"]["command"].index("--port") + 1],
        services["dashboard"]["command"][services["dashboard"]["command"].index("--port") + 1],
        services["agent"]["command"][services["agent"]["command"].index("--metrics-port") + 1],
    }
    assert wanted <= exposed
    assert runtime.all("ENTRYPOINT") == ['["causeline"]']
    assert "causeline" in pyproject()["project"]["scripts"]


def test_dockerfile_installs_what_the_readme_installs():
    """Install the README's distribution and extras by default, and plain for the agent."""
    spec = readme_install()
    match = re.fullmatch(r"([^\[\]]+)(?:\[([^\]]*)\])?", spec)
    assert match, spec
    target, extras = match.group(1), set(filter(None, (match.group(2) or "").split(",")))
    project = pyproject()["project"]
    name = project["name"] if (ROOT / target / "pyproject.toml").exists() else target
    assert name == "causeline"
    assert extras <= set(project["optional-dependencies"])
    df = dockerfile()
    runtime = df.stages[-1]
    default = df.arg_default("CAUSELINE_EXTRAS", runtime)
    assert set(filter(None, default.split(","))) == extras
    assert df.arg_default("CAUSELINE_EXTRAS", df.stages[0]) == default
    install = " ".join(a for a in runtime.all("RUN") if "pip install" in a)
    assert re.search(rf'"{name}\[\$\{{CAUSELINE_EXTRAS\}}\]"', install), install
    assert re.search(rf"spec={name};", install), "no plain install for the agent image"
    assert "--no-index" in install and "--find-links /wheels" in install
