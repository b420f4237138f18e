"""Static checks on a tool file's bytes, run before any of its code executes: size, UTF-8, syntax, function, docstring."""

from __future__ import annotations

import ast
import hashlib

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.names import name_problem
from tui_agent.core.versioning.indexguard import conflict_marker_line

MAX_TOOL_BYTES = 256 * 1024


def source_sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_name(name: str) -> None:
    problem = name_problem(name)
    if problem is not None:
        raise PipelineError("name", problem)


def decode_source(data: bytes) -> str:
    """The source text of a tool file; raises PipelineError(stage="read") when too big or not UTF-8."""
    if len(data) > MAX_TOOL_BYTES:
        raise PipelineError("read", f"the file is {len(data)} bytes, over the {MAX_TOOL_BYTES // 1024} KB limit")
    try:
        return data.decode("utf-8-sig")  # a UTF-8 BOM is accepted, as Python itself accepts it
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PipelineError("read", f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", line) from exc


def find_tool_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found = node
    return found


def check_source(name: str, source: str) -> ast.Module:
    """Parse the source and check the tool function exists at top level with a docstring; raises PipelineError."""
    try:
        tree = ast.parse(source, filename=f"{name}.py")
    except SyntaxError as exc:
        raise PipelineError("parse", f"syntax error: {exc.msg}", exc.lineno) from exc
    except ValueError as exc:  # e.g. null bytes
        raise PipelineError("parse", f"cannot parse: {exc}") from exc
    except (RecursionError, MemoryError) as exc:
        raise PipelineError("parse", f"cannot parse: nested too deeply ({type(exc).__name__})") from None
    function = find_tool_function(tree, name)
    if function is None:
        raise PipelineError("parse", f"no top-level function named {name!r} (a tool file defines a function named like the file)")
    if isinstance(function, ast.AsyncFunctionDef):
        raise PipelineError("parse", f"{name}() is async; tools are plain functions", function.lineno)
    if not ast.get_docstring(function):
        raise PipelineError("parse", f"{name}() has no docstring (a summary line, then an Args: section)", function.lineno)
    return tree


def check_tool_bytes(name: str, data: bytes) -> str:
    """All static checks for one tool file; returns the source text or raises PipelineError."""
    check_name(name)
    source = decode_source(data)
    check_no_conflict(data)
    check_source(name, source)
    return source


def check_no_conflict(data: bytes) -> None:
    """A file holding git's conflict markers is an unresolved conflict, even when it still imports (markers in a docstring)."""
    line = conflict_marker_line(data)
    if line is not None:
        raise PipelineError("conflict", "unresolved conflict: git conflict markers (<<<<<<< … >>>>>>>) are in the file; "
                                        "resolve them and `git add` it (the catalog commits nothing until then)", line)
