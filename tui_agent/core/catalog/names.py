"""Tool-name rules: the built-in tool names a tool file may not take, and the identifier check."""

from __future__ import annotations

import keyword

BUILTIN_TOOL_NAMES: frozenset[str] = frozenset(
    {
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "grep",
        "run_shell",
        "run_python",
        "create_tool",
        "prune_tool",
        "search_tools",
        "create_recipe",
        "call_tool",
    }
)

MAX_NAME_LENGTH = 64


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a tool name, or None when it can."""
    if not name:
        return "the tool name is empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"the tool name is longer than {MAX_NAME_LENGTH} characters"
    if not name.isascii() or not name.isidentifier():
        return f"{name!r} is not a Python identifier (use letters, digits and underscores)"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return f"{name!r} is a Python keyword"
    if name.startswith("_"):
        return f"{name!r} starts with an underscore (private names are not tools)"
    if name.startswith("test_"):
        return f"{name!r} starts with test_ (reserved for a tool's own tests)"
    if name.startswith("mcp__"):
        return f"{name!r} starts with mcp__ (reserved for the tools of MCP servers)"
    if name in BUILTIN_TOOL_NAMES:
        return f"{name!r} collides with the built-in tool of the same name"
    return None
