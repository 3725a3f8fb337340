"""Readers of the deploy/ files shared by the deploy tests."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"


def yaml_files() -> list[Path]:
    """Return every YAML file under deploy/."""
    return sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yaml", ".yml"))


def load_all(path: Path) -> list:
    """Return the non-empty documents of a (multi-document) YAML file."""
    with path.open() as fh:
        return [doc for doc in yaml.safe_load_all(fh) if doc is not None]


def compose() -> dict:
    """Return the parsed compose file."""
    return load_all(DEPLOY / "compose.yaml")[0]


def k8s_objects() -> list[tuple[Path, dict]]:
    """Return every Kubernetes object under deploy/k8s (kustomizations excluded)."""
    out = []
    for path in sorted(K8S.rglob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        out.extend((path, doc) for doc in load_all(path))
    return out


def k8s_object(kind: str, name: str) -> dict:
    """Return the one object of that kind and name."""
    found = [d for _, d in k8s_objects() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}"
    return found[0]


def flag(args: list[str], name: str) -> str | None:
    """Return the value after ``name`` in an argument list, or None."""
    args = [str(a) for a in args]
    return args[args.index(name) + 1] if name in args else None


def pyproject() -> dict:
    """Return the parsed pyproject.toml."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@dataclass
class Stage:
    """One build stage of a Dockerfile: its base, name and instructions."""

    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        """Return the arguments of every instruction with that keyword."""
        return [arg for kw, arg in self.instructions if kw == keyword]


@dataclass
class Dockerfile:
    """A parsed Dockerfile: global ARG defaults and the stages in order."""

    global_args: dict[str, str]
    stages: list[Stage]

    def arg_default(self, name: str, stage: Stage) -> str | None:
        """Return the default of a build ARG as seen in a stage."""
        value = self.global_args.get(name)
        for arg in stage.all("ARG"):
            key, _, default = arg.partition("=")
            if key.strip() == name and default:
                value = default.strip().strip('"')
        return value


def dockerfile(path: Path = DEPLOY / "Dockerfile") -> Dockerfile:
    """Parse instructions, joining continuation lines and dropping comments."""
    logical, current = [], ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if current and line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "FROM":
            match = re.match(r"(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$", rest, re.IGNORECASE)
            assert match, f"cannot read FROM {rest!r}"
            stages.append(Stage(base=match.group(1), name=match.group(2)))
        elif not stages and keyword == "ARG":
            key, _, default = rest.partition("=")
            global_args[key.strip()] = default.strip()
        else:
            stages[-1].instructions.append((keyword, rest))
    return Dockerfile(global_args, stages)


def readme_install() -> str:
    """Return the pip install argument of the first bash block of the top-level README."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block, "README.md has no bash block"
    match = re.search(r"pip install\s+(?:-\S+\s+)*['\"]?([^'\"\s]+)", block.group(1))
    assert match, f"no pip install in README's first bash block: {block.group(1)!r}"
    return match.group(1)
