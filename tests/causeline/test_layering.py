"""The command line's layering: cli.py imports the commands; no command imports cli.py."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ROOT / "causeline" / "commands"
PACKAGE = "causeline.commands"


def _imported(tree: ast.AST) -> set[str]:
    """Return every module an import in the tree names, relative ones made absolute."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from ..cli import y
                parts = PACKAGE.split(".")[: len(PACKAGE.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)  # from causeline import cli
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value))
    return names


def _imports_cli(tree: ast.AST) -> bool:
    return any(n == "causeline.cli" or n.startswith("causeline.cli.") for n in _imported(tree))


def test_no_command_module_imports_the_cli():
    modules = sorted(COMMANDS.rglob("*.py"))
    assert len(modules) > 10, "the check found no command modules"
    strays = [str(p.relative_to(ROOT)) for p in modules if _imports_cli(ast.parse(p.read_text()))]
    assert strays == [], f"import causeline.commands.errors instead of causeline.cli: {strays}"


def test_the_check_sees_every_spelling_of_the_import():
    for code in (
        "from causeline.cli import CliError",
        "def f():\n    from causeline.cli import CliError",
        "import causeline.cli",
        "from causeline import cli",
        "from ..cli import CliError",
        "from .. import cli",
        "import importlib\nimportlib.import_module('causeline.cli')",
    ):
        assert _imports_cli(ast.parse(code)), code
    assert not _imports_cli(ast.parse("from causeline.commands.errors import CliError"))


def test_the_cli_catches_the_error_the_commands_raise():
    from causeline.cli import CliError as caught
    from causeline.commands.errors import CliError

    assert caught is CliError
