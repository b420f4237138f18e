"""Find unfinished code that the project's rules forbid behind a finished-looking feature: NotImplementedError, TODO/FIXME, empty bodies."""

import ast
import io
import tokenize
from pathlib import Path


MARKERS = ("TODO", "FIXME", "XXX")


def _is_protocol_or_abstract(node: ast.FunctionDef | ast.AsyncFunctionDef, parents: dict[ast.AST, ast.AST]) -> bool:
    decorators = {getattr(d, "attr", getattr(d, "id", "")) for d in node.decorator_list}
    if decorators & {"abstractmethod", "overload"}:
        return True
    owner = parents.get(node)
    if isinstance(owner, ast.ClassDef):
        bases = {getattr(b, "attr", getattr(b, "id", "")) for b in owner.bases}
        return bool(bases & {"Protocol", "ABC"})
    return False


def _empty_body(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    return len(body) == 1 and (isinstance(body[0], ast.Pass) or (
        isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and body[0].value.value is Ellipsis))


def _findings(source: str) -> list[tuple[int, str, str]]:
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if getattr(raised, "id", None) == "NotImplementedError":
                found.append((node.lineno, "not-implemented", "raise NotImplementedError"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _empty_body(node) \
                and not _is_protocol_or_abstract(node, parents):
            found.append((node.lineno, "empty-body", f"def {node.name}(...) does nothing"))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and any(marker in token.string for marker in MARKERS):
            found.append((token.start[0], "marker", token.string.strip()))
    return sorted(found)


def todo_stubs(folder: str = "tui_agent") -> list[dict]:
    """List NotImplementedError raises, TODO/FIXME/XXX comments and do-nothing functions in a folder.

    Args:
        folder: The folder to scan, relative to the project root.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"no folder {folder!r} under {Path.cwd()}")
    report = []
    for path in sorted(root.rglob("*.py")):
        try:
            findings = _findings(path.read_text(encoding="utf-8"))
        except (SyntaxError, tokenize.TokenError) as error:
            report.append({"path": path.as_posix(), "line": 0, "kind": "unparsable", "text": str(error)})
            continue
        report += [{"path": path.as_posix(), "line": line, "kind": kind, "text": text} for line, kind, text in findings]
    return report


def test_todo_stubs() -> None:
    sample = (
        "from typing import Protocol\n"
        "def later():\n    raise NotImplementedError\n"
        "def empty():\n    \"\"\"Doc.\"\"\"\n    pass\n"
        "class Port(Protocol):\n    def send(self) -> None: ...\n"
        "x = 1  # TODO: finish\n"
        "def real():\n    return 1\n"
    )
    kinds = [(line, kind) for line, kind, _ in _findings(sample)]
    assert kinds == [(3, "not-implemented"), (4, "empty-body"), (9, "marker")]
    assert all(item["kind"] in {"not-implemented", "empty-body", "marker", "unparsable"} for item in todo_stubs())
