"""Name rules, the one place every tool or recipe name from a person or a model is checked: the lookup rule
(API-tool-name compatible, never a path), the tool identifier rule, and the built-in names a tool may not take."""

from __future__ import annotations

import keyword
import re

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
API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What the Messages API accepts as a tool name; every tool and recipe name fits it."""


def lookup_problem(name: object, noun: str = "tool") -> str | None:
    """Why `name` cannot name any tool or recipe (to look up, revert, prune, restore...), or None."""
    if not isinstance(name, str) or not name:
        return f"the {noun} name is empty"
    if "/" in name or "\\" in name or ".." in name or name.startswith("."):
        return (f"{name!r} is not a {noun} name but a path: a name is letters, digits, '_' and '-' only "
                f"(the file is .agent/{noun}s/<name>)")
    if not name.isascii():
        return f"{name!r} has non-ASCII characters: a {noun} name is letters, digits, '_' and '-' (ASCII)"
    if len(name) > MAX_NAME_LENGTH:
        return f"the {noun} name is longer than {MAX_NAME_LENGTH} characters"
    if not API_NAME.fullmatch(name):
        return f"{name!r} is not a valid {noun} name: use only letters, digits, '_' and '-'"
    return None


def check_lookup_name(name: object, noun: str = "tool") -> None:
    """Raise PipelineError(stage "name") when `name` cannot name a tool or recipe (see `lookup_problem`)."""
    from tui_agent.core.catalog.errors import PipelineError

    problem = lookup_problem(name, noun)
    if problem is not None:
        raise PipelineError("name", problem)


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a new tool's name, or None when it can."""
    problem = lookup_problem(name)
    if problem is not None:
        return problem
    if not name.isidentifier():
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
