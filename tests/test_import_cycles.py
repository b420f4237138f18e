"""No import cycle in tui_agent, counting imports inside functions (not `if TYPE_CHECKING:` ones), and none upwards."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tui_agent"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def typing_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under `if TYPE_CHECKING:` (never run, so no cycle at run time)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return skipped


def imported_names(path: Path, package: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = typing_only(tree)
    names: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names += [f"{base}.{alias.name}" for alias in node.names] + [base]
    return names


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for imported in imported_names(path, package):
            target = imported
            while target and target not in paths:  # `from package import name`: the module, or the package
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):  # a module's own package runs first
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_finder_sees_a_cycle_through_an_import_inside_a_function() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = import_graph()
    assert "tui_agent.core.trust.check" in graph["tui_agent.core.mcp.trust"]  # imported inside a function


def test_no_import_cycle_in_tui_agent() -> None:
    assert cycles(import_graph()) == []


def test_versioning_imports_nothing_above_it() -> None:
    allowed = ("tui_agent.core.versioning", "tui_agent.core.errors", "tui_agent.core.pids", "tui_agent.core.projectfs",
               "tui_agent.core.textsafety", "tui_agent.core.tempfolders", "tui_agent.core.sharedfile")  # leaf helpers below git's door
    upward = sorted(f"{name} -> {target}" for name, targets in import_graph().items()
                    if name.startswith("tui_agent.core.versioning.")
                    for target in targets if not target.startswith(allowed))
    assert upward == []
