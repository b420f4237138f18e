"""Find the test files that exercise a module of this project (by what they import), to run just those."""

import ast
from pathlib import Path

# Where the tests live and how they are found (testpaths) is set here.
DEPENDS_ON = ["pyproject.toml"]


def _dotted(module: str) -> str:
    name = module.strip().removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _imports(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def find_test_for(module: str, tests_folder: str = "tests") -> list[dict]:
    """List the test files importing a module (or anything inside it), with the importing lines.

    Args:
        module: A dotted module name or a path, e.g. "tui_agent.core.versioning.gitstore" or "tui_agent/core/project.py".
        tests_folder: Where the tests are, relative to the project root.
    """
    target = _dotted(module)
    if not target:
        raise ValueError("name a module, e.g. tui_agent.core.project")
    hits = []
    for path in sorted(Path(tests_folder).rglob("*.py")):
        try:
            imports = _imports(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        lines = sorted({line for line, name in imports if name == target or name.startswith(target + ".")})
        if lines:
            hits.append({"test_file": path.as_posix(), "lines": lines,
                         "command": f".venv/bin/python -m pytest {path.as_posix()} -q"})
    return hits


def test_find_test_for() -> None:
    assert _dotted("tui_agent/core/project.py") == "tui_agent.core.project"
    assert _dotted("tui_agent/core/__init__.py") == "tui_agent.core"
    sample = "import os\nfrom tui_agent.core.project import Project\nimport tui_agent.core.events as ev\n"
    names = [name for _, name in _imports(sample)]
    assert "tui_agent.core.project.Project" in names and "tui_agent.core.events" in names
    hits = find_test_for("tui_agent/core/project.py")
    assert all(hit["test_file"].startswith("tests/") and hit["lines"] for hit in hits)
    assert find_test_for("no_such_module_anywhere") == []
