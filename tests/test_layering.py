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
