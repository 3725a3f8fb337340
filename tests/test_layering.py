"""The layering rule: collector imports no project module; analysis imports no store or API."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("collector", "correlator", "dashboard", "causeline", "migrations")
SERVER_STACK = ("pandas", "scipy", "sqlalchemy", "dash", "plotly", "fastapi", "alembic")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _files(folder: str):
    return sorted((ROOT / folder).rglob("*.py"))


def test_collector_imports_no_project_module_and_no_server_stack():
    for path in _files("collector"):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top not in PROJECT or top == "collector", f"{path}: imports {name}"
            assert top not in SERVER_STACK, f"{path}: imports {name}"


def test_correlator_imports_only_collector_schema():
    for path in _files("correlator"):
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "collector":
                assert name == "collector.schema", f"{path}: imports {name}"
            assert top not in ("dashboard", "causeline"), f"{path}: imports {name}"


def test_analysis_modules_import_no_store_or_api():
    pure = [
        *_files("correlator/analysis"),
        ROOT / "correlator" / "bundle.py",
        ROOT / "correlator" / "selector.py",
    ]
    for path in pure:
        for name in _imports(path):
            assert not name.startswith(("correlator.store", "correlator.api")), (path, name)
            assert name.split(".")[0] not in ("sqlalchemy", "fastapi", "starlette"), (path, name)


def test_agent_install_runs_without_the_server_stack():
    """The base install (the agent) must start with no pandas, SQLAlchemy, Dash, FastAPI..."""
    import subprocess
    import sys

    blocked = [*SERVER_STACK, "orjson", "numpy", "starlette", "uvicorn", "psycopg", "jsonschema"]
    code = (
        f"import sys\nfor name in {blocked!r}:\n    sys.modules[name] = None\n"
        "from causeline.cli import build_parser\n"
        "build_parser().parse_args(['agent', '--once', '--print'])\n"
        "import collector.agent, collector.probe, collector.middleware, collector.shipper\n"
        "import collector.sources.gpu, collector.sources.host, collector.sources.scrape\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_store_imports_no_api_incidents_alerts_or_prometheus_source():
    for path in _files("correlator/store"):
        for name in _imports(path):
            assert not name.startswith(
                (
                    "correlator.api",
                    "correlator.incidents",
                    "correlator.alerts",
                    "correlator.promsource",
                    "correlator.analysis",
                )
            ), f"{path}: imports {name}"


def test_dashboard_talks_to_the_service_over_http_only():
    for path in _files("dashboard"):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top not in ("correlator", "causeline", "collector"), f"{path}: imports {name}"
            assert top not in ("sqlalchemy", "psycopg", "alembic"), f"{path}: imports {name}"


# Modules under correlator/ that may read the process environment: the settings (which also
# hand alert routing the variables its ${VAR} names) and the API's composition root.
ENV_READERS = ("correlator/settings.py", "correlator/api/")


def _reads_environment(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(a.name in ("environ", "getenv") for a in node.names)
        ):
            return True
    return False


def test_below_the_composition_roots_nothing_reads_the_environment():
    readers = [str(p.relative_to(ROOT)) for p in _files("correlator") if _reads_environment(p)]
    assert readers, "the check found no reader at all: it no longer sees os.environ"
    strays = [p for p in readers if not p.startswith(ENV_READERS)]
    assert strays == [], f"read the environment below causeline/ and correlator/api/: {strays}"


# What the sample engine itself may use of the store beside it: connections, SQL helpers,
# the table definitions and the lease; never a record repository or a consumer.
TSDB = ROOT / "correlator" / "store" / "tsdb"
TSDB_BASE = ("engine", "dialect", "tables", "lease", "events")


def _from_imports(path: Path) -> list[tuple[str, list[str]]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names)
    return out


def test_the_sample_engine_is_entered_through_its_face():
    import correlator.store.tsdb as tsdb

    face = set(tsdb.__all__)
    outside = [p for folder in PROJECT for p in _files(folder) if TSDB not in p.parents]
    through_face = 0
    for path in outside:
        for module, names in _from_imports(path):
            assert not module.startswith("correlator.store.tsdb."), f"{path}: imports {module}"
            if module == "correlator.store.tsdb":
                past = sorted(set(names) - face)
                assert not past, f"{path}: {past} are not in correlator.store.tsdb.__all__"
                through_face += 1
    assert through_face >= 10, "the check found almost no use of the face: it no longer sees it"


def test_the_sample_engine_uses_only_the_stores_foundations():
    for path in sorted(TSDB.rglob("*.py")):
        for module, _ in _from_imports(path):
            if module.startswith("correlator.store.") and not module.startswith(
                "correlator.store.tsdb"
            ):
                assert module.rsplit(".", 1)[1] in TSDB_BASE, f"{path}: imports {module}"
            assert not module.startswith(("correlator.api", "correlator.incidents")), path
