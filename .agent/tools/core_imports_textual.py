"""Find imports that break the layering rule: nothing under tui_agent/core may import textual or tui_agent.ui."""

import ast
from pathlib import Path

# The rule this tool checks is also enforced by this test: if it changes, re-check the tool.
DEPENDS_ON = ["tests/test_layering.py"]

FORBIDDEN = ("textual", "tui_agent.ui", "rich")


def _violations(source: str, forbidden: tuple[str, ...]) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if any(name == root or name.startswith(root + ".") for root in forbidden):
                found.append((node.lineno, name))
    return found


def core_imports_textual(folder: str = "tui_agent/core", include_rich: bool = False) -> list[dict]:
    """List every import of textual (or tui_agent.ui) in the core, which must stay UI-free.

    Args:
        folder: The folder that must not import the UI, relative to the project root.
        include_rich: Also report imports of rich (textual's renderer), which the core does not need either.
    """
    forbidden = FORBIDDEN if include_rich else FORBIDDEN[:2]
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"no folder {folder!r} under {Path.cwd()}")
    report = []
    for path in sorted(root.rglob("*.py")):
        try:
            violations = _violations(path.read_text(encoding="utf-8"), forbidden)
        except SyntaxError as error:
            report.append({"path": path.as_posix(), "line": error.lineno or 0, "module": "(syntax error)"})
            continue
        report += [{"path": path.as_posix(), "line": line, "module": name} for line, name in violations]
    return report


def test_core_imports_textual() -> None:
    sample = "import os\nimport textual.app\nfrom textual.widgets import Static\nfrom tui_agent.ui import app\nfrom .x import y\n"
    assert _violations(sample, FORBIDDEN[:2]) == [(2, "textual.app"), (3, "textual.widgets"), (4, "tui_agent.ui")]
    assert _violations("import textualize\nimport rich.text\n", FORBIDDEN[:2]) == []
    assert _violations("import rich.text\n", FORBIDDEN) == [(1, "rich.text")]
    assert isinstance(core_imports_textual(), list)
