"""Lists the modules of tui_agent outside core/versioning that import git or build a git command line (JSON on stdout)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tui_agent"
VERSIONING = PACKAGE / "core" / "versioning"


def imports_git(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        if any(name == "git" or name.startswith("git.") for name in names):
            return True
    return False


def runs_git(tree: ast.AST) -> bool:
    """A `["git", ...]` command line, or a call whose first argument is a shell string starting with `git `."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                return True
        if isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("git "):
                return True
    return False


def main() -> None:
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in PACKAGE.rglob("*.py")}
    outside = {path: tree for path, tree in trees.items() if VERSIONING not in path.parents}
    print(json.dumps({
        "modules": len(outside),
        "versioning_importing_git": sorted(str(p.relative_to(PACKAGE)) for p, t in trees.items() if p not in outside and imports_git(t)),
        "importing": sorted(str(p.relative_to(PACKAGE)) for p, t in outside.items() if imports_git(t)),
        "running": sorted(str(p.relative_to(PACKAGE)) for p, t in outside.items() if runs_git(t)),
    }))


if __name__ == "__main__":
    main()
