"""The core must never import Textual: the TUI is a thin layer over core events."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "tui_agent" / "core"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_has_no_textual_import() -> None:
    offenders = [
        str(path.relative_to(CORE))
        for path in CORE.rglob("*.py")
        if any(name == "textual" or name.startswith("textual.") for name in imported_modules(path))
    ]
    assert CORE.is_dir() and list(CORE.rglob("*.py"))
    assert offenders == []


def test_core_modules_have_docstrings() -> None:
    missing = [str(p.relative_to(CORE)) for p in CORE.rglob("*.py") if ast.get_docstring(ast.parse(p.read_text())) is None]
    assert missing == []


PACKAGE = CORE.parent
VERSIONING = CORE / "versioning"


def runs_git(path: Path) -> bool:
    """A `["git", ...]` command line, or a shell string starting with `git `, anywhere in the module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                return True
        if isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("git "):
                return True
    return False


def test_git_is_reached_only_through_core_versioning() -> None:
    modules = [path for path in PACKAGE.rglob("*.py") if VERSIONING not in path.parents]
    importing = [str(p.relative_to(PACKAGE)) for p in modules
                 if any(name == "git" or name.startswith("git.") for name in imported_modules(p))]
    running = [str(p.relative_to(PACKAGE)) for p in modules if runs_git(p)]
    assert modules and [p for p in VERSIONING.rglob("*.py") if "git" in imported_modules(p)]
    assert importing == [] and running == []
