"""Placeholders in recipe actions (`{path}`, `{paths}`, `{args}`, `{name}`): which trigger allows which, and filling them in."""

from __future__ import annotations

import re
from typing import Any

PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")

ALLOWED: dict[str, frozenset[str]] = {
    "file_changed": frozenset({"path", "paths"}),
    "command": frozenset({"args"}),
    "session_start": frozenset(),
    "tool_authored": frozenset({"name"}),
    "tool_drifted": frozenset({"name", "repair"}),
}
"""Placeholders each trigger kind provides. `{{` and `}}` stand for literal braces."""

MEANING = {
    "path": "one changed file (the action runs once per file)",
    "paths": "every changed file (one run; a whole-value `\"{paths}\"` becomes a list)",
    "args": "the text typed after the slash command",
    "name": "the name of the tool that was authored (tool_authored) or that drifted (tool_drifted)",
    "repair": "the repair prompt of the drifted tool: its drift diff, failing test output and source",
}


def placeholders_in(text: str) -> list[str]:
    """The placeholder names used in `text`, in order (literal `{{`/`}}` excluded)."""
    return [match.group(1) for match in PLACEHOLDER.finditer(text) if match.group(1) is not None]


def placeholders_in_value(value: Any) -> list[str]:
    """Placeholder names used anywhere in a TOML value (strings inside lists and tables too)."""
    if isinstance(value, str):
        return placeholders_in(value)
    if isinstance(value, list):
        return [name for item in value for name in placeholders_in_value(item)]
    if isinstance(value, dict):
        return [name for item in value.values() for name in placeholders_in_value(item)]
    return []


def placeholder_problem(text_or_value: Any, trigger: str) -> str | None:
    """Why the placeholders in a value cannot be filled for `trigger`, or None when they all can."""
    allowed = ALLOWED[trigger]
    for name in placeholders_in_value(text_or_value):
        if name in allowed:
            continue
        if name in MEANING:
            others = ", ".join(kind for kind, names in ALLOWED.items() if name in names)
            return f"placeholder {{{name}}} ({MEANING[name]}) is only available with on = {others!r}, not {trigger!r}"
        hint = ", ".join(f"{{{item}}}" for item in sorted(allowed)) or "none"
        return f"unknown placeholder {{{name}}} (available with on = {trigger!r}: {hint}; write {{{{ and }}}} for literal braces)"
    return None


def fill_text(text: str, values: dict[str, str]) -> str:
    """Replace each `{name}` in `text` by `values[name]`; `{{`/`}}` become literal braces."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        return values[match.group(1)]

    return PLACEHOLDER.sub(replace, text)


def fill_value(value: Any, values: dict[str, str], lists: dict[str, list[str]]) -> Any:
    """Fill placeholders in a TOML value; a string that is exactly `{paths}` becomes the list itself."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value)
        if whole and whole.group(1) in lists:
            return list(lists[whole.group(1)])
        return fill_text(value, values)
    if isinstance(value, list):
        return [fill_value(item, values, lists) for item in value]
    if isinstance(value, dict):
        return {key: fill_value(item, values, lists) for key, item in value.items()}
    return value


def uses(value: Any, name: str) -> bool:
    """Whether the placeholder `name` appears anywhere in `value`."""
    return name in placeholders_in_value(value)
